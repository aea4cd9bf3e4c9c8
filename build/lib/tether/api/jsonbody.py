"""Request bodies as JSON a service can keep and echo back, or a ValueError saying why not.

``json.loads`` accepts more than RFC 8259 does: the ``NaN`` and ``Infinity``
literals, numbers too large for a float (``1e400`` becomes infinity), and
``\\ud800`` escapes that leave a lone surrogate in a string. None of these
can be stored, put in a response or even encoded as UTF-8, so a body that
holds one is refused here as malformed, before any service sees it, rather
than failing later halfway through a write. Nesting deep enough to exhaust
the parser's recursion is refused the same way.
"""

from __future__ import annotations

import json
from typing import Any


def loads(raw: bytes) -> Any:
    """The JSON document in ``raw``; ValueError (JSONDecodeError, UnicodeDecodeError) when it is not usable."""
    try:
        value = json.loads(raw, parse_constant=_no_constant, parse_float=_finite)
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None
    _check_strings(value)
    return value


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _finite(text: str) -> float:
    number = float(text)
    if number in (float("inf"), float("-inf")):
        raise ValueError(f"Number out of range: {text}")
    return number


def _check_strings(value: Any) -> None:
    """Every key and string value must encode as UTF-8 (no lone surrogates); iterative, as nesting may be deep."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                raise ValueError("String contains a lone surrogate (not valid Unicode)") from None
        elif isinstance(item, dict):
            pending.extend(item.keys())
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
