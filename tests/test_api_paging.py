"""The shared helpers of the API layer: the list pager, oslo's boolean words and the microversion headers."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from tether.api import paging, versions
from tether.api.paging import STORED, ListQuery, SortKey
from tether.booleans import bool_from_string


@dataclass
class Row:
    id: str
    name: str | None
    size: int


ROWS = [Row("a", "x", 3), Row("b", None, 1), Row("c", "x", 2), Row("d", "y", 1)]


def ids(rows: list[Row]) -> list[str]:
    return [row.id for row in rows]


def test_each_key_sorts_in_its_own_direction_with_none_first_ascending() -> None:
    query = ListQuery(sort=(SortKey("name"), SortKey("size", ascending=False)))
    assert ids(paging.page(ROWS, query)) == ["b", "a", "c", "d"]
    query = ListQuery(sort=(SortKey("name", ascending=False), SortKey("id")))
    assert ids(paging.page(ROWS, query)) == ["d", "a", "c", "b"]


def test_no_sort_keys_keep_the_rows_own_order_and_stored_ties_follow_the_direction() -> None:
    assert ids(paging.page(ROWS, ListQuery(limit=2))) == ["a", "b"]
    descending = (SortKey("size", ascending=False), SortKey(STORED, ascending=False))
    assert ids(paging.page(ROWS, ListQuery(sort=descending))) == ["a", "c", "d", "b"]


def test_the_page_after_a_marker_holds_what_sorts_after_it_even_when_it_is_filtered_out() -> None:
    query = ListQuery(filters={"name": ["x", "y"]}, sort=(SortKey("size"), SortKey("id")), marker="b", limit=2)
    marker = ROWS[1]  # size 1, id b: filtered out by name
    assert ids(paging.page(ROWS, query, marker=marker)) == ["d", "c"]
    before = ListQuery(sort=(SortKey("size"), SortKey("id")), marker="a", limit=2, reverse=True)
    assert ids(paging.page(ROWS, before, marker=ROWS[0])) == ["d", "c"]
    query = ListQuery(sort=(SortKey("id"),), marker="c", limit=5, reverse=True)
    assert ids(paging.page(ROWS, query, marker=ROWS[2])) == ["a", "b"]


def test_a_zero_limit_is_an_empty_page_and_none_is_every_row() -> None:
    assert paging.page(ROWS, ListQuery(limit=0)) == []
    assert paging.page(ROWS, ListQuery(marker="d", limit=0, reverse=True), marker=ROWS[3]) == []
    assert len(paging.page(ROWS, ListQuery())) == 4


def test_a_stored_order_needs_the_marker_among_the_rows() -> None:
    assert ids(paging.page(ROWS, ListQuery(marker="b"), marker=ROWS[1])) == ["c", "d"]
    with pytest.raises(ValueError):
        paging.page(ROWS, ListQuery(marker="b"), marker=Row("b", None, 1))


def test_the_marker_row_comes_with_a_marker_and_only_with_one() -> None:
    with pytest.raises(ValueError):
        paging.page(ROWS, ListQuery(marker="b"))
    with pytest.raises(ValueError):
        paging.page(ROWS, ListQuery(), marker=ROWS[1])
    assert paging.find(ROWS, "c", lambda row: row.id) is ROWS[2]
    assert paging.find(ROWS, "z", lambda row: row.id) is None


def test_views_are_read_by_key() -> None:
    views = [{"id": "2", "name": "b"}, {"id": "1", "name": None}]
    assert paging.page(views, ListQuery(sort=(SortKey("name"),)), paging.item) == views[::-1]


@pytest.mark.parametrize("subject", ["1", "T", " yes ", "On", "0", "f", "NO", "off", "maybe", "", None, 2, 1, True])
def test_booleans_read_as_oslo_reads_them(subject: object) -> None:
    strutils = pytest.importorskip("oslo_utils.strutils")
    assert bool_from_string(subject) == strutils.bool_from_string(subject)
    assert bool_from_string(subject, default=None) == strutils.bool_from_string(subject, default=None)
    try:
        expected: object = strutils.bool_from_string(subject, strict=True)
    except ValueError as error:
        expected = str(error)
    try:
        got: object = bool_from_string(subject, strict=True)
    except ValueError as error:
        got = str(error)
    assert got == expected


def test_the_requested_microversion_comes_from_either_header() -> None:
    assert versions.requested("compute", {"openstack-api-version": "compute 2.60"}) == "2.60"
    assert versions.requested("compute", {"openstack-api-version": "baremetal 1.2",
                                          "x-openstack-nova-api-version": "2.5"}) == "2.5"
    assert versions.requested("baremetal", {"x-openstack-ironic-api-version": "latest"}) == "latest"
    assert versions.requested("compute", {}) is None
    version = versions.Microversion(2, 36)
    assert version.within("2.32", "2.36") and not version.within("2.37") and version.at_most("2.36")
