"""oslo.utils' ``strutils.bool_from_string``: how nova, neutron and ironic read a boolean from text.

The same sets, the same default and the same ``ValueError`` words, so each
service can put them in its own message. It is written here rather than
imported from oslo.utils because importing ``oslo_utils.strutils`` compiles
its password-masking patterns, which ``tether serve`` would pay at every start.
"""

from __future__ import annotations

from typing import Any

TRUE_STRINGS = ("1", "t", "true", "on", "y", "yes")
FALSE_STRINGS = ("0", "f", "false", "off", "n", "no")
ACCEPTABLE = ", ".join(f"'{word}'" for word in sorted(TRUE_STRINGS + FALSE_STRINGS))


def bool_from_string(subject: Any, strict: bool = False, default: bool | None = False) -> bool | None:
    """True or False for a recognised word (any case, surrounding space ignored), else ``default``.

    With ``strict`` an unrecognised subject is a ValueError instead.
    """
    if isinstance(subject, bool):
        return subject
    if not isinstance(subject, str):
        subject = str(subject)
    lowered = subject.strip().lower()
    if lowered in TRUE_STRINGS:
        return True
    if lowered in FALSE_STRINGS:
        return False
    if strict:
        raise ValueError(f"Unrecognized value '{subject}', acceptable values are: {ACCEPTABLE}")
    return default
