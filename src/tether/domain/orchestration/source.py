"""Template and environment text into plain data, keeping the line each value came from.

PyYAML's composer keeps a mark on every node; walking the node tree next to the
constructed document gives each path its line. JSON is YAML, so JSON text gets
lines too; a mapping that arrives already parsed (python-heatclient sends JSON)
has paths only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from tether.domain.orchestration.errors import Path, StackValidationFailed


class _Loader(yaml.SafeLoader):
    """heat's loader: dates such as ``heat_template_version: 2013-05-23`` stay strings."""


_Loader.add_constructor("tag:yaml.org,2002:timestamp", _Loader.construct_scalar)  # type: ignore[type-var]


@dataclass(frozen=True)
class Located:
    """A parsed document and the (1-based) line of each path in it; empty when it came as data."""

    data: Any
    lines: Mapping[Path, int] = field(default_factory=dict)

    def line_of(self, path: Path) -> int | None:
        """The line of ``path``, or of its nearest ancestor that has one (a function's result has none)."""
        path = tuple(path)
        while True:
            line = self.lines.get(path)
            if line is not None or not path:
                return line
            path = path[:-1]


def load(source: str | Mapping[str, Any] | None, what: str = "template") -> Located:
    if source is None:
        return Located({})
    if not isinstance(source, str):
        return Located(source)
    loader = None
    try:
        loader = _Loader(source)  # reading the text can fail already (a character YAML refuses)
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        raise StackValidationFailed(f"Error parsing {what} [root stack] {error}", line=line) from None
    finally:
        if loader is not None:
            loader.dispose()
    lines: dict[Path, int] = {}
    if node is not None:
        _mark(node, (), lines)
    return Located({} if data is None else data, lines)


def _mark(node: yaml.Node, path: Path, lines: dict[Path, int]) -> None:
    lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode):
                # the key's own line: a value that is a nested block starts on the next line
                lines[(*path, key.value)] = key.start_mark.line + 1
                _mark(value, (*path, key.value), lines)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _mark(item, (*path, index), lines)
