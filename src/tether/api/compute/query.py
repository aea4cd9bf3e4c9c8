"""Query parameters as nova reads them: limit and marker, booleans, times, and the "next" links of a page."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import Request
from pydantic import BaseModel

from tether.api import openapi
from tether.api.compute.bodies import fail
from tether.booleans import bool_from_string

MAX_LIMIT = 1000  # nova's [api] max_limit


def last(request: Request, name: str) -> str | None:
    """A query parameter's value; the last one when it is repeated (webob's MultiDict does the same)."""
    values = request.query_params.getlist(name)
    return values[-1] if values else None


def limit_of(raw: str | None) -> int:
    if raw is None:
        return MAX_LIMIT
    if not raw.isdigit():
        raise fail(f"Invalid input for query parameters limit. Value: {raw}. '{raw}' does not match '^[0-9]*$'")
    return min(MAX_LIMIT, int(raw))


def limit_and_marker(request: Request) -> tuple[int, str | None]:
    return limit_of(last(request, "limit")), last(request, "marker")


Text = Annotated[str | None, openapi.described(openapi.STRING)]
Boolean = Annotated[str | None, openapi.described(openapi.BOOLEAN_TEXT)]
Moment = Annotated[str | None, openapi.described(openapi.DATE_TIME)]


class PageQuery(BaseModel):
    """A list's query string as nova reads it: each value as text (the last of a repeated one), checked in
    nova's words where it is used. These are the paging parameters every list takes."""

    limit: Annotated[str | None, openapi.described(openapi.LIMIT)] = None
    marker: Text = None

    def page(self) -> tuple[int, str | None]:
        return limit_of(self.limit), self.marker


def strict_bool(name: str, raw: str) -> bool:
    """oslo's bool_from_string(strict=True): anything else is a 400."""
    try:
        return bool(bool_from_string(raw, strict=True))
    except ValueError as error:
        raise fail(f"Invalid input for query parameters {name}. Value: {raw}. {error}") from None


def lenient_bool(raw: str | None, default: bool = False) -> bool:
    """oslo's bool_from_string(default=...): an unknown value is the default."""
    return bool(bool_from_string(raw, default=default))


def timestamp(name: str, raw: str) -> float:
    """An ISO 8601 query parameter (changes-since, changes-before) as epoch seconds; naive means UTC."""
    try:
        moment = datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        raise fail(f"Invalid input for query parameters {name}. Value: {raw}. '{raw}' is not a 'date-time'") \
            from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def next_links(request: Request, collection: str, items: Sequence[Any], last_id: str | None,
               rel_key: str = "links") -> dict[str, Any]:
    """``{"<collection>_links": [next]}`` when the page is full, as nova's _get_collection_links."""
    raw = last(request, "limit")
    wanted = min(int(raw), MAX_LIMIT) if raw is not None and raw.isdigit() else MAX_LIMIT
    if not wanted or wanted != len(items) or last_id is None:
        return {}
    params = dict(sorted(request.query_params.items()))
    params["marker"] = last_id
    href = f"{request.app.state.base_url}/compute/v2.1/{collection}?{urlencode(params)}"
    return {rel_key: [{"rel": "next", "href": href}]}
