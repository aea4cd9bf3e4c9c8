"""GET /v2/images as glance reads its query: filters with operators, sorting, limit and marker.

Glance's rules, in its words: ``name``, ``id``, ``status``, ``container_format``
and ``disk_format`` take ``in:a,b`` (the CLI's ``server list`` sends
``id=in:...``) or ``eq:``; ``created_at``/``updated_at`` take comparison
operators; ``size_min``/``size_max`` bound the size; ``tag`` may repeat;
any other name filters on a custom property. Pages hold 25 images unless
``limit`` says otherwise (at most 1000), newest first.
"""

from __future__ import annotations

import csv
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from tether.api import paging
from tether.domain import image as rules
from tether.domain.errors.image import ImageBadRequest
from tether.domain.image import Image

DEFAULT_LIMIT = 25  # glance's limit_param_default
MAX_LIMIT = 1000  # glance's api_limit_max
SORT_KEYS = ("name", "status", "container_format", "disk_format", "size", "id", "created_at", "updated_at")
OPERATOR_FILTERS = ("name", "id", "status", "container_format", "disk_format")
TIME_FILTERS = ("created_at", "updated_at")
MEMBER_STATUSES = ("pending", "accepted", "rejected", "all")
# Columns glance compares for equality that Tether never fills in.
ALWAYS_NULL = ("virtual_size",)
# Columns glance compares for equality, as strings.
EQUALITY = ("checksum", "os_hash_algo", "os_hash_value")
NOT_FILTERS = ("limit", "marker", "member_status", "sort", "sort_key", "sort_dir", "tag", "visibility", "owner",
               "os_hidden", "protected", "changes-since")

Check = Callable[[Image], bool]


@dataclass
class ImageQuery:
    service: dict[str, Any] = field(default_factory=dict)
    checks: list[Check] = field(default_factory=list)
    sorts: list[paging.SortKey] = field(default_factory=list)
    limit: int = DEFAULT_LIMIT
    marker: str | None = None

    def keeps(self, image: Image) -> bool:
        return all(check(image) for check in self.checks)


def parse_query(params: list[tuple[str, str]]) -> ImageQuery:
    last = dict(params)
    query = ImageQuery()
    if last.get("changes-since"):
        raise ImageBadRequest(reason='The "changes-since" filter is no longer available on v2.')
    visibility = rules.check_list_visibility(last.get("visibility") or None)
    if visibility is not None:
        query.service["visibility"] = visibility
    if "owner" in last:
        query.service["owner"] = last["owner"]
    if last.get("member_status", "accepted") not in MEMBER_STATUSES:
        raise ImageBadRequest(reason=f"Invalid status: {last['member_status']}")
    query.service["member_status"] = last.get("member_status", "accepted")
    _flag(query, last, "os_hidden", "false", lambda image, hidden: image.os_hidden is hidden)
    if "protected" in last:
        _flag(query, last, "protected", "", lambda image, wanted: image.protected is wanted)
    tags = [value.strip() for name, value in params if name == "tag"]
    if tags:
        query.checks.append(lambda image: all(tag in image.tags for tag in tags))
    for name, value in last.items():
        if name in NOT_FILTERS:
            continue
        _filter(query, name, value)
    query.sorts = _sorts(params)
    query.limit = min(limit_param(last.get("limit")), MAX_LIMIT)
    query.marker = last.get("marker")
    return query


def _flag(query: ImageQuery, last: dict[str, str], name: str, default: str,
          test: Callable[[Image, bool], bool]) -> None:
    text = last.get(name, default).lower()
    if text not in ("true", "false"):
        raise ImageBadRequest(reason=f"Invalid value '{text}' for '{name}' filter. Valid values are 'true' or "
                                     "'false'.")
    wanted = text == "true"
    query.checks.append(lambda image: test(image, wanted))


def _filter(query: ImageQuery, name: str, value: str) -> None:
    if name.endswith(("_min", "_max")) and name[:-4] == "size":
        try:
            bound = int(value)
        except ValueError:
            raise ImageBadRequest(reason="Unable to filter on a range with a non-numeric value.") from None
        if name.endswith("_min"):
            query.checks.append(lambda image: image.size is not None and image.size >= bound)
        else:
            query.checks.append(lambda image: image.size is not None and image.size <= bound)
    elif name in TIME_FILTERS:
        query.checks.append(_time_check(name, value))
    elif name in OPERATOR_FILTERS:
        operator, operand = split_operator(value)
        if operator == "in":
            values = split_values(operand)
        elif operator == "eq":
            values = [operand]
        else:
            raise ImageBadRequest(reason=f"Unable to filter by unknown operator '{operator}'.")
        if name == "id":
            query.service["ids"] = values
        elif name in ("name", "status") and len(values) == 1:
            query.service[name] = values[0]
        else:
            query.checks.append(lambda image: getattr(image, name) in values)
    elif name in ("min_disk", "min_ram", "size"):
        query.checks.append(lambda image: str(getattr(image, name)) == value)
    elif name in EQUALITY:
        query.checks.append(lambda image: getattr(image, name) == value)
    elif name in ALWAYS_NULL:
        query.checks.append(lambda image: False)
    else:
        query.checks.append(lambda image: image.properties.get(name) == value)


def split_operator(expression: str) -> tuple[str, str]:
    """glance's ``split_filter_op``: ``in:a,b`` -> ("in", "a,b"); no operator means eq."""
    left, sep, right = expression.partition(":")
    if not sep:
        return "eq", left
    if _parse_time(expression) is not None:
        return "eq", expression
    return left, right


def split_values(text: str) -> list[str]:
    """glance's ``split_filter_value_for_quotes``: commas separate, double quotes protect."""
    return next(csv.reader([text], skipinitialspace=True), [])


def _parse_time(text: str) -> float | None:
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


_COMPARISONS: dict[str, Callable[[float, float], bool]] = {
    "eq": lambda a, b: a == b, "neq": lambda a, b: a != b, "gt": lambda a, b: a > b,
    "gte": lambda a, b: a >= b, "lt": lambda a, b: a < b, "lte": lambda a, b: a <= b,
}


def _time_check(name: str, value: str) -> Check:
    operator, operand = split_operator(value)
    threshold = _parse_time(operand)
    if threshold is None:
        raise ImageBadRequest(reason=f'Bad "{name}" query filter format. Use ISO 8601 DateTime notation.')
    compare = _COMPARISONS.get(operator)
    if compare is None:
        raise ImageBadRequest(reason="Unable to filter using the specified operator.")
    # glance keeps whole seconds
    return lambda image: compare(float(int(getattr(image, name))), threshold)


def _sort_key(key: str) -> str:
    if key not in SORT_KEYS:
        raise ImageBadRequest(reason=f"Invalid sort key: {key}. It must be one of the following: "
                                     f"{', '.join(SORT_KEYS)}.")
    return key


def _sort_dir(direction: str) -> str:
    if direction not in ("asc", "desc"):
        raise ImageBadRequest(reason=f"Invalid sort direction: {direction}")
    return direction


def _sorts(params: list[tuple[str, str]]) -> list[paging.SortKey]:
    """glance's ``_get_sorting_params`` and the DB layer's defaults: unnamed directions are desc,
    and created_at then id always end the order."""
    names = {name for name, _ in params}
    keys: list[str] = []
    dirs: list[str] = []
    if "sort" in names:
        if "sort_key" in names or "sort_dir" in names:
            raise ImageBadRequest(reason="Old and new sorting syntax cannot be combined")
        for item in dict(params)["sort"].strip().split(","):
            key, _, direction = item.partition(":")
            keys.append(_sort_key(key.strip()))
            dirs.append(_sort_dir(direction.strip() or "desc"))
    else:
        keys = [_sort_key(value.strip()) for name, value in params if name == "sort_key"]
        dirs = [_sort_dir(value.strip()) for name, value in params if name == "sort_dir"]
        if len(dirs) > 1 and len(dirs) != len(keys):
            raise ImageBadRequest(reason="Number of sort dirs does not match the number of sort keys")
        if len(dirs) == 1:
            dirs = dirs * max(len(keys), 1)
    if not keys:
        keys = ["created_at"]
    dirs += ["desc"] * (len(keys) - len(dirs))
    order = [paging.SortKey(key, direction == "asc") for key, direction in zip(keys, dirs, strict=True)]
    for key in ("created_at", "id"):
        if key not in keys:
            order.append(paging.SortKey(key, False))
    return order


def limit_param(text: str | None) -> int:
    """glance's ``limit`` query parameter: a whole number, at least 0, 25 when absent."""
    if text is None:
        return DEFAULT_LIMIT
    try:
        limit = int(text)
    except ValueError:
        raise ImageBadRequest(reason="limit param must be an integer") from None
    if limit < 0:
        raise ImageBadRequest(reason="limit param must be positive")
    return limit


def paged(query: ImageQuery) -> paging.ListQuery:
    """The order, marker and limit, as the store runs them (every sort key is an image column)."""
    return paging.ListQuery(sort=tuple(query.sorts), marker=query.marker, limit=query.limit)


def page(images: list[Image], query: ImageQuery, marker: Image | None) -> list[Image]:
    """The same page of images already in hand (the in-memory pager)."""
    return paging.page(images, paged(query), marker=marker)
