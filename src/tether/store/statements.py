"""SQL text for a repository's few statement shapes, rendered once per shape and dialect.

Building a SQLAlchemy Core statement and its cache key costs ~0.3 ms per
query; the repositories issue a handful of shapes thousands of times. So each
shape (which filters, of which kind, which columns) is rendered to text once,
with the column types' own bind and result processors for the dialect, and
then run as text.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import JSON, Table
from sqlalchemy.engine import Dialect

Processor = Callable[[Any], Any] | None

EQ, IN, NULL = "eq", "in", "null"


@dataclass(frozen=True)
class Prepared:
    sql: str
    binds: tuple[Processor, ...]
    results: tuple[Processor, ...] = ()
    # (position, processor) of the result columns that have one: most have none
    _processed: tuple[tuple[int, Callable[[Any], Any]], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_processed", tuple(
            (position, result) for position, result in enumerate(self.results) if result is not None))

    def parameters(self, values: Sequence[Any]) -> tuple[Any, ...]:
        return tuple(value if bind is None or value is None else bind(value)
                     for bind, value in zip(self.binds, values, strict=True))

    def row(self, values: Sequence[Any]) -> list[Any]:
        if len(values) != len(self.results):
            raise ValueError(f"a row of {len(values)} columns for a statement of {len(self.results)}")
        row = list(values)
        for position, result in self._processed:
            row[position] = result(row[position])
        return row


def filter_shape(filters: dict[str, Any]) -> tuple[tuple[tuple[str, str, int], ...], list[Any]]:
    """The shape of a filter dict (names, kinds, list lengths) and its values in order."""
    shape, values = [], []
    for name, value in filters.items():
        if isinstance(value, (list, tuple, set, frozenset)):
            items = sorted(value, key=repr) if isinstance(value, (set, frozenset)) else list(value)
            shape.append((name, IN, len(items)))
            values.extend(items)
        elif value is None:
            shape.append((name, NULL, 0))
        else:
            shape.append((name, EQ, 0))
            values.append(value)
    return tuple(shape), values


_json_decoder = json.JSONDecoder()


# Most JSON columns of a row hold an empty object or list (a server's metadata, tags, hints...):
# made directly, each a new one as a decode would give.
_EMPTY_JSON = {"{}": dict, "[]": list}


def _json_value(value: str | None) -> Any:
    # What SQLAlchemy's own JSON processor does, less json.loads's two whitespace regexes
    # (a quarter of the cost): the text was written by json.dumps, so it has no padding.
    if value is None:
        return None
    empty = _EMPTY_JSON.get(value)
    return empty() if empty is not None else _json_decoder.raw_decode(value)[0]


def _result_processor(impl: Any, dialect: Dialect) -> Processor:
    try:
        processor = impl.result_processor(dialect, None)
    except (TypeError, LookupError, ValueError):
        # Numeric types on asyncpg want the column's type oid; the driver already returns native numbers.
        return None
    if processor is not None and isinstance(impl, JSON) \
            and getattr(dialect, "_json_deserializer", None) is None:
        return _json_value
    return processor


def _quote(name: str) -> str:
    return f'"{name}"'


class Renderer:
    """Renders one table's statements for one dialect."""

    def __init__(self, table: Table, dialect: Dialect) -> None:
        self.table = table
        self.dialect = dialect
        self.numbered = dialect.paramstyle == "numeric_dollar"
        self.name = _quote(table.name)
        self.columns = [column.name for column in table.columns]
        self._bind: dict[str, Processor] = {}
        self._result: dict[str, Processor] = {}
        for column in table.columns:
            impl = column.type.dialect_impl(dialect)
            self._bind[column.name] = impl.bind_processor(dialect)
            self._result[column.name] = _result_processor(impl, dialect)

    def _placeholders(self, names: Sequence[str], start: int) -> list[str]:
        if self.numbered:
            return [f"${start + i}" for i in range(len(names))]
        return ["?"] * len(names)

    def _where(self, shape: tuple[tuple[str, str, int], ...], start: int) -> tuple[str, list[str]]:
        clauses, names = [], []
        for name, kind, count in shape:
            if kind == NULL:
                clauses.append(f"{_quote(name)} IS NULL")
            elif kind == IN:
                if count == 0:
                    clauses.append("1 = 0")
                    continue
                marks = self._placeholders([name] * count, start + len(names))
                clauses.append(f"{_quote(name)} IN ({', '.join(marks)})")
                names.extend([name] * count)
            else:
                (mark,) = self._placeholders([name], start + len(names))
                clauses.append(f"{_quote(name)} = {mark}")
                names.append(name)
        return (" WHERE " + " AND ".join(clauses)) if clauses else "", names

    def select(self, shape: tuple[tuple[str, str, int], ...], order_by: Sequence[str], limit: int | None,
               lock: str | None = None) -> Prepared:
        where, names = self._where(shape, 1)
        sql = f"SELECT {', '.join(map(_quote, self.columns))} FROM {self.name}{where}"
        if order_by:
            sql += " ORDER BY " + ", ".join(map(_quote, order_by))
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        if lock is not None and self.dialect.name == "postgresql":
            sql += " FOR SHARE" if lock == "share" else " FOR UPDATE"
        return Prepared(sql, tuple(self._bind[name] for name in names),
                        tuple(self._result[name] for name in self.columns))

    def count(self, shape: tuple[tuple[str, str, int], ...]) -> Prepared:
        where, names = self._where(shape, 1)
        return Prepared(f"SELECT count(*) FROM {self.name}{where}", tuple(self._bind[name] for name in names),
                        (None,))

    def tally(self, shape: tuple[tuple[str, str, int], ...], by: Sequence[str]) -> Prepared:
        where, names = self._where(shape, 1)
        grouped = ", ".join(map(_quote, by))
        return Prepared(f"SELECT {grouped}, count(*) FROM {self.name}{where} GROUP BY {grouped} ORDER BY {grouped}",
                        tuple(self._bind[name] for name in names), (*(self._result[name] for name in by), None))

    def insert(self, columns: Sequence[str], returning: str | None) -> Prepared:
        marks = self._placeholders(columns, 1)
        sql = f"INSERT INTO {self.name} ({', '.join(map(_quote, columns))}) VALUES ({', '.join(marks)})"
        if returning is not None:
            sql += f" RETURNING {_quote(returning)}"
        return Prepared(sql, tuple(self._bind[name] for name in columns), (None,) if returning else ())

    def update(self, columns: Sequence[str], shape: tuple[tuple[str, str, int], ...]) -> Prepared:
        marks = self._placeholders(columns, 1)
        assignments = ", ".join(f"{_quote(name)} = {mark}" for name, mark in zip(columns, marks, strict=True))
        where, names = self._where(shape, len(columns) + 1)
        return Prepared(f"UPDATE {self.name} SET {assignments}{where}",
                        tuple(self._bind[name] for name in [*columns, *names]))

    def delete(self, shape: tuple[tuple[str, str, int], ...]) -> Prepared:
        where, names = self._where(shape, 1)
        return Prepared(f"DELETE FROM {self.name}{where}", tuple(self._bind[name] for name in names))
