"""List queries as neutron reads them: filters, ``fields``, sorting and pagination.

Equality filters on stored attributes go to the service (a repeated
parameter means "any of"); filters on what the API itself reports (one
value for every row) keep every row or none. Unknown filter names are
refused (filter-validation), an empty value matches an empty attribute
(empty-string-filtering), and ``changed_since`` keeps what changed at or
after a moment (standard-attr-timestamp). Sorting and pagination run in the
database, as neutron's native pagination does; the marker must be a
resource the caller can see.
"""

from __future__ import annotations

import math
import urllib.parse
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from tether.api import paging
from tether.api.network.attributes import Resource
from tether.api.network.errors import HTTPBadRequest
from tether.domain import network_tags
from tether.domain.errors.network import BadRequest, InvalidInput
from tether.domain.listing import AtLeast

NOT_FILTERS = ("fields", "sort_key", "sort_dir", "limit", "marker", "page_reverse", "changed_since")
# A port's fixed_ips filter: ``fixed_ips=ip_address=10.0.0.5``, ``fixed_ips=subnet_id=<id>`` and
# ``fixed_ips=ip_address_substr=10.0`` (ip-substring-filtering).
FIXED_IP_FILTERS = ("ip_address", "subnet_id", "ip_address_substr")
# What every resource stores without an attribute field of its own (the API shows them as ISO text, which
# sorts as the stored seconds do).
STANDARD_COLUMNS = ("created_at", "updated_at")


@dataclass
class ListQuery:
    service_filters: dict[str, list[Any]] = field(default_factory=dict)
    view_filters: dict[str, list[Any]] = field(default_factory=dict)
    fields: list[str] = field(default_factory=list)
    sorts: list[tuple[str, bool]] = field(default_factory=list)
    limit: int | None = None
    marker: str | None = None
    page_reverse: bool = False
    changed_since: float | None = None
    # tags, tags-any, not-tags, not-tags-any: each a list of comma lists
    tag_filters: dict[str, list[str]] = field(default_factory=dict)


def parse_query(resource: Resource, params: list[tuple[str, str]]) -> ListQuery:
    query = ListQuery()
    grouped: dict[str, list[str]] = {}
    for name, value in params:
        grouped.setdefault(name, []).append(value)
    invalid = []
    for name, values in grouped.items():
        if name in NOT_FILTERS:
            continue
        if name in network_tags.TAG_FILTERS and "tags" in resource.by_name:
            query.tag_filters[name] = values
            continue
        attr = resource.by_name.get(name)
        if attr is None or not attr.filter or not attr.visible:
            invalid.append(name)
            continue
        if resource.singular == "port" and name == "fixed_ips":
            _fixed_ip_filters(values, query.service_filters)
            continue
        converted = [attr.filter_value(value) for value in values]
        if attr.field is not None:
            query.service_filters.setdefault(attr.field, []).extend(converted)
        else:
            query.view_filters[name] = converted
    if invalid:
        raise HTTPBadRequest(f"{invalid} is invalid attribute for filtering")
    query.fields = [value for value in grouped.get("fields", []) if value]
    query.sorts = _sorts(resource, grouped)
    query.limit = _limit(grouped)
    query.marker = _last(grouped, "marker")
    query.page_reverse = (_last(grouped, "page_reverse") or "false").lower() == "true"
    since = _last(grouped, "changed_since")
    if since is not None:
        query.changed_since = _moment(since)
    return query


def _last(grouped: dict[str, list[str]], name: str) -> str | None:
    values = grouped.get(name)
    return values[-1] if values else None


def _fixed_ip_filters(values: list[str], into: dict[str, list[Any]]) -> None:
    """neutron-lib's ``convert_kvp_list_to_dict``; keys other than the three neutron reads are ignored."""
    for value in values:
        key, sep, item = value.partition("=")
        if not sep or not key:
            raise InvalidInput(error_message=f"'{value}' is not of the form <key>=[value]")
        if key in FIXED_IP_FILTERS:
            into.setdefault(key, []).append(item)


def _sorts(resource: Resource, grouped: dict[str, list[str]]) -> list[tuple[str, bool]]:
    """neutron's ``api_common.get_sorts``."""
    keys = [key for key in grouped.get("sort_key", []) if key]
    dirs = [direction for direction in grouped.get("sort_dir", []) if direction]
    if len(keys) != len(dirs):
        raise HTTPBadRequest("The number of sort_keys and sort_dirs must be same")
    absent = [key for key in keys if key not in resource.by_name or not resource.by_name[key].sort]
    if absent:
        raise HTTPBadRequest(f"{absent} is invalid attribute for sort_keys")
    invalid = [direction for direction in dirs if direction not in ("asc", "desc")]
    if invalid:
        raise HTTPBadRequest(f"{invalid} is invalid value for sort_dirs, valid value is 'asc' and 'desc'")
    return list(zip(keys, [direction == "asc" for direction in dirs], strict=True))


def _limit(grouped: dict[str, list[str]]) -> int | None:
    text = _last(grouped, "limit")
    if text is None:
        return None
    try:
        limit = int(text)
    except ValueError:
        limit = -1
    if limit < 0:
        raise BadRequest(resource="limit", msg=f"Limit must be an integer 0 or greater and not '{text}'")
    return limit or None


def _moment(text: str) -> float:
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise InvalidInput(error_message="The input changed_since must be in the following format: "
                                         "YYYY-MM-DDTHH:MM:SSZ") from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.timestamp()


# -- applying it in the database ---------------------------------------------------------


def stored(resource: Resource, query: ListQuery) -> paging.ListQuery:
    """The list as the store runs it (``Repository.page``): the requested order by the service's names
    (then id: neutron always makes the order total with it), ``changed_since``, and the page.

    What the API itself reports rather than stores (``port_security_enabled``, ``subnetpool_id``, ...) is
    one value for every row: sorting by it keeps the order, and a filter on it keeps every row or none
    (``constants_match``).
    """
    order = [*query.sorts, ("id", True)] if "id" not in {key for key, _ in query.sorts} else list(query.sorts)
    keys = []
    for name, ascending in order:
        column = _column(resource, name)
        if column is not None:
            keys.append(paging.SortKey(column, ascending))
    filters = {}
    if query.changed_since is not None:
        # neutron compares whole seconds: int(updated_at) >= since
        filters["updated_at"] = AtLeast(float(math.ceil(query.changed_since)))
    return paging.ListQuery(filters=filters, sort=tuple(keys), marker=query.marker if query.limit is not None else None,
                            limit=query.limit, reverse=query.page_reverse)


def _column(resource: Resource, name: str) -> str | None:
    attr = resource.by_name[name]
    if attr.field is not None:
        return attr.field
    return name if name in STANDARD_COLUMNS else None


def constants_match(resource: Resource, query: ListQuery) -> bool:
    """Whether the filters on what the API reports rather than stores keep the rows (all of them) or not."""
    return all(resource.by_name[name].fixed in wanted for name, wanted in query.view_filters.items())


# -- applying it to views in hand (the in-memory pager) -----------------------------------


def paged(query: ListQuery) -> paging.ListQuery:
    """The views' filters, their order (the requested keys, then id: neutron always makes the order total
    with it) and the page."""
    order = [*query.sorts, ("id", True)] if "id" not in {key for key, _ in query.sorts} else list(query.sorts)
    return paging.ListQuery(filters=query.view_filters,
                            sort=tuple(paging.SortKey(key, ascending) for key, ascending in order),
                            marker=query.marker if query.limit is not None else None, limit=query.limit,
                            reverse=query.page_reverse)


def page(views: list[dict[str, Any]], query: ListQuery, marker: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The views the filters keep, sorted, and one page of them: ``limit`` after the marker (before it with
    ``page_reverse``)."""
    return paging.page(views, paged(query), paging.item, marker=marker if query.limit is not None else None)


def links(url: str, params: list[tuple[str, str]], items: list[dict[str, Any]],
          query: ListQuery) -> list[dict[str, str]]:
    """neutron's ``get_pagination_links``."""
    if query.limit is None:
        return []
    kept = [(name, value) for name, value in params if name not in ("marker", "page_reverse")]
    found: list[dict[str, str]] = []
    if not (len(items) < query.limit and not query.page_reverse):
        marker = [("marker", items[-1]["id"])] if items else []
        found.append({"rel": "next", "href": f"{url}?{urllib.parse.urlencode(kept + marker)}"})
    if not (len(items) < query.limit and query.page_reverse):
        marker = [("marker", items[0]["id"])] if items else []
        found.append({"rel": "previous",
                      "href": f"{url}?{urllib.parse.urlencode([*kept, *marker, ('page_reverse', 'True')])}"})
    return found
