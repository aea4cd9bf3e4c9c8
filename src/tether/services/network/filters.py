"""List filters: neutron's equality filters, checked and converted to each column's type.

A list value means "any of". Query strings arrive as text, so "true" and "42"
are accepted for boolean and integer columns; anything else that does not fit
is refused before it reaches the database (PostgreSQL would refuse it less
politely).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import JSON, Boolean, Float, Integer, Table

from tether.booleans import bool_from_string
from tether.domain.errors.network import InvalidAttribute, InvalidFilter
from tether.domain.listing import ListQuery
from tether.services.context import RequestContext


def _convert(name: str, column_type: Any, value: object) -> object:
    if value is None:
        return None
    if isinstance(column_type, Boolean):
        try:
            # neutron's convert_to_boolean: oslo's bool_from_string, strictly
            return bool_from_string(value, strict=True)
        except ValueError:
            raise InvalidAttribute(attr=name, reason=f"'{value}' cannot be converted to boolean") from None
    if isinstance(column_type, (Integer, Float)):
        kind = int if isinstance(column_type, Integer) else float
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return kind(value)
        try:
            return kind(value)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            raise InvalidAttribute(attr=name, reason=f"'{value}' is not an integer") from None
    if not isinstance(value, str):
        raise InvalidAttribute(attr=name, reason=f"'{value}' is not a valid string")
    return value


def column_filters(table: Table, filters: dict[str, Any], extra: tuple[str, ...] = ()) -> dict[str, Any]:
    """``filters`` with values converted; unknown names and JSON columns refused."""
    columns = {column.name: column for column in table.columns}
    invalid = [
        name for name in filters
        if name not in extra and (name not in columns or isinstance(columns[name].type, JSON))
    ]
    if invalid:
        raise InvalidFilter(names=f"[{', '.join(invalid)}]")
    converted: dict[str, Any] = {}
    for name, value in filters.items():
        if name in extra:
            converted[name] = value
            continue
        column_type = columns[name].type
        if isinstance(value, (list, tuple, set, frozenset)):
            converted[name] = [_convert(name, column_type, item) for item in value]
        else:
            converted[name] = _convert(name, column_type, value)
    return converted


def as_values(value: Any) -> list[Any]:
    """One filter's value as the values a row may equal: a list means "any of"."""
    return list(value) if isinstance(value, (list, tuple, set, frozenset)) else [value]


def listed(query: ListQuery | None, filters: dict[str, Any]) -> ListQuery:
    """``query`` (every row in stored order when None) narrowed by ``filters`` as well."""
    query = query or ListQuery()
    return query._replace(filters={**query.filters, **{name: as_values(value) for name, value in filters.items()}})


def own_projects_only(ctx: RequestContext, filters: dict[str, Any]) -> None:
    """A non-admin's ``project_id`` filter cut down to its own project (``ctx.owns``): what it may see."""
    if ctx.is_admin:
        return
    given = as_values(filters.get("project_id", ctx.project_id))
    filters["project_id"] = [project for project in given if project is not None and project == ctx.project_id]
