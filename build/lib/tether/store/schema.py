"""Tables derived from the domain's dataclasses, so a field is declared once.

A dataclass field becomes a column of the matching type (dicts and lists as
JSON); ``Optional`` fields are nullable. Keys, uniqueness and indexes are
declared beside each table in ``tables.py``.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any

from sqlalchemy import JSON, Boolean, Column, Float, Integer, MetaData, String, Table, Text


def _column_type(hint: Any) -> tuple[Any, bool]:
    nullable = False
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        args = [arg for arg in typing.get_args(hint) if arg is not type(None)]
        nullable = len(args) != len(typing.get_args(hint))
        hint = args[0] if len(args) == 1 else Any
        origin = typing.get_origin(hint)
    if hint is bool:
        return Boolean(), nullable
    if hint is int:
        return Integer(), nullable
    if hint is float:
        return Float(), nullable
    if hint is str:
        return String(255), nullable
    return JSON(), True


def stored_fields(cls: type, exclude: tuple[str, ...] = ()) -> list[str]:
    return [f.name for f in dataclasses.fields(cls) if f.name not in exclude]


def table_for(
    metadata: MetaData,
    name: str,
    cls: type,
    *,
    primary_key: tuple[str, ...],
    exclude: tuple[str, ...] = (),
    text: tuple[str, ...] = (),
    autoincrement: str | None = None,
    extra: tuple[Any, ...] = (),
) -> Table:
    hints = typing.get_type_hints(cls)
    columns = []
    for field_name in stored_fields(cls, exclude):
        column_type, nullable = _column_type(hints[field_name])
        if field_name in text:
            column_type = Text()
        is_key = field_name in primary_key
        columns.append(
            Column(
                field_name,
                column_type,
                primary_key=is_key,
                nullable=nullable and not is_key,
                autoincrement=field_name == autoincrement,
            )
        )
    return Table(name, metadata, *columns, *extra)
