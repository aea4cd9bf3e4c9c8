"""Lists in the database (store.keyset): the same pages as the in-memory pager, on SQLite and PostgreSQL,
read through an index rather than the whole table."""

from __future__ import annotations

import random
import re

import pytest
from sqlalchemy import text

from tether.api import paging
from tether.domain.baremetal import Node
from tether.domain.listing import STORED, AtLeast, AtMost, Contains, ListQuery, Present, SortKey
from tether.store import keyset, repos
from tether.store.database import Database


def _nodes() -> list[Node]:
    pick = random.Random(7)
    return [Node(uuid=f"{index:04d}-node", name=None, resource_class=pick.choice([None, "a", "b", "B", "c"]),
                 provision_state=pick.choice(["available", "active", "manageable"]),
                 maintenance=pick.random() < 0.3, instance_uuid=pick.choice([None, None, f"i-{index}"]),
                 chassis_uuid=pick.choice([None, "gold", "silver"]), created_at=float(pick.randint(1, 4)))
            for index in range(40)]


NODES = _nodes()
ROWS = [Node(uuid="a", name=None, resource_class="x", created_at=3.0),
        Node(uuid="b", name=None, resource_class=None, created_at=1.0),
        Node(uuid="c", name=None, resource_class="x", created_at=2.0),
        Node(uuid="d", name=None, resource_class="y", created_at=1.0)]


async def _stored(database: Database, nodes: list[Node]) -> None:
    async with database.begin() as conn:
        await repos.nodes.add_all(conn, nodes)


async def _page(database: Database, query: ListQuery, marker: Node | None = None, keep=None) -> list[str]:
    async with database.begin() as conn:
        return [node.uuid for node in await repos.nodes.page(conn, query, marker=marker, keep=keep)]


def _ids(nodes: list[Node]) -> list[str]:
    return [node.uuid for node in nodes]


async def test_the_pager_cases_hold_in_the_database(database: Database) -> None:
    await _stored(database, ROWS)
    query = ListQuery(sort=(SortKey("resource_class"), SortKey("created_at", ascending=False), SortKey(STORED)))
    assert await _page(database, query) == ["b", "a", "c", "d"]
    query = ListQuery(sort=(SortKey("resource_class", ascending=False), SortKey(STORED)))
    assert await _page(database, query) == ["d", "a", "c", "b"]
    # the page after a marker that the filters leave out holds what sorts after it
    query = ListQuery(filters={"resource_class": ["x", "y"]}, sort=(SortKey("created_at"), SortKey(STORED)), marker="b",
                      limit=2)
    assert await _page(database, query, ROWS[1]) == ["d", "c"]
    before = ListQuery(sort=(SortKey("created_at"), SortKey(STORED)), marker="a", limit=2, reverse=True)
    assert await _page(database, before, ROWS[0]) == ["d", "c"]
    assert await _page(database, ListQuery(limit=0)) == []
    assert await _page(database, ListQuery(marker="b"), ROWS[1]) == ["c", "d"]
    with pytest.raises(ValueError):
        await _page(database, ListQuery(marker="b"))


async def test_every_order_filter_and_marker_gives_the_in_memory_pagers_page(database: Database) -> None:
    await _stored(database, NODES)
    pick = random.Random(11)
    columns = ["resource_class", "provision_state", "maintenance", "instance_uuid", "chassis_uuid", "created_at"]
    conditions = [("resource_class", ["a", None]), ("maintenance", [True]), ("instance_uuid", Present()),
                  ("chassis_uuid", Present(False)), ("created_at", AtLeast(2.0)), ("created_at", AtMost(3.0)),
                  ("resource_class", Contains("b")), ("provision_state", []),
                  ("provision_state", ["active", "available"])]
    for _ in range(120):
        sort = tuple(SortKey(name, pick.random() < 0.5) for name in pick.sample(columns, pick.randint(0, 3)))
        sort += (SortKey("uuid", pick.random() < 0.5),)
        filters = dict(pick.sample(conditions, pick.randint(0, 2)))
        alternatives = ((({"maintenance": [False]}, {"resource_class": ["c"]}),) if pick.random() < 0.3 else ())
        marker = pick.choice(NODES) if pick.random() < 0.7 else None
        query = ListQuery(filters=filters, sort=sort, marker=marker.uuid if marker else None,
                          limit=pick.choice([None, 1, 3, 10]), reverse=pick.random() < 0.3, alternatives=alternatives)
        expected = _ids(paging.page(NODES, query, marker=marker))
        assert await _page(database, query, marker) == expected, query
        # a test the database cannot run, applied while reading batches in the page's order
        odd = [uuid for uuid in _ids(paging.page(NODES, query._replace(limit=None), marker=marker))
               if int(uuid[:4]) % 2]
        # with page_reverse, the rows just before the marker: the last of them in the query's order
        limited = odd if query.limit is None else odd[-query.limit:] if query.reverse else odd[:query.limit]
        got = await _page(database, query, marker, keep=lambda node: int(node.uuid[:4]) % 2 == 1)
        assert got == limited, query


async def test_a_page_is_read_through_an_index_not_the_table(database: Database) -> None:
    # One page of nodes in creation order after a marker, and a node by its instance: each a search of an
    # index (its bounds from the marker or the filter), never a scan of the table and never an OFFSET.
    await _stored(database, NODES)
    marker = NODES[10]
    query = ListQuery(sort=(SortKey("created_at"), SortKey("uuid")), marker=marker.uuid, limit=5)
    by_instance = ListQuery(filters={"instance_uuid": [NODES[3].instance_uuid or "x"]}, limit=5)
    async with database.begin() as conn:
        for listed, edge in ((query, (marker.created_at, marker.uuid)), (by_instance, None)):
            found = keyset.statement(repos.nodes.table, listed, conn.dialect.name, edge=edge, limit=listed.limit)
            sql = str(found.compile(dialect=conn.dialect, compile_kwargs={"literal_binds": True}))
            assert re.search(r"OFFSET\s+(?!0\b)", sql, re.IGNORECASE) is None, sql  # SQLite's own OFFSET 0 aside
            if conn.dialect.name != "sqlite":
                continue  # PostgreSQL's planner scans a 40-row table whatever its indexes
            plan = " ".join(str(row[-1]) for row in await conn.execute(text(f"EXPLAIN QUERY PLAN {sql}")))
            assert "USING INDEX" in plan and "SCAN nodes" not in plan, plan


def test_what_neutron_reports_but_does_not_store_is_one_value_for_every_row() -> None:
    # network lists filter and sort in the database: an attribute with no column behind it must be a
    # constant (a filter on it keeps every row or none, a sort by it keeps the order), or it is not listed
    from tether.api.network.attributes import NETWORK, PORT, SUBNET, UNSET
    from tether.api.network.listing import STANDARD_COLUMNS

    for resource in (NETWORK, SUBNET, PORT):
        for attr in resource.attributes:
            if attr.field is not None or attr.name in STANDARD_COLUMNS:
                continue
            if attr.filter and attr.visible:
                assert attr.fixed is not UNSET, f"{resource.singular}.{attr.name} filters in memory"
            if attr.sort:
                assert attr.fixed is not UNSET or not attr.visible, f"{resource.singular}.{attr.name} sorts"


async def test_a_name_search_pages_by_the_substring_index_and_follows_renames(database: Database) -> None:
    # The instances' substring index (store.name_search) is kept by the database itself: an insert, a
    # rename and a delete are each seen by the next search, and a page of a search is the rows that hold
    # the text, ignoring case, in the page's order.
    from tether.domain.compute import Instance
    from tether.store import name_search

    names = ["web-1", "WEB-2", "db-web", "db-1", "cache"]
    rows = [Instance(uuid=f"{index:04d}-i", name=name, project_id="p", user_id="u", flavor_id="f", image_id="i",
                     created_at=float(index), updated_at=float(index)) for index, name in enumerate(names)]
    query = ListQuery(filters={"name": Contains("web")}, sort=(SortKey("created_at", False), SortKey("uuid")))
    async with database.begin() as conn:
        await repos.instances.add_all(conn, rows)
        found = await name_search.matching(conn, repos.instances.table, "name", "web", 10)
        assert sorted(found or []) == ["0000-i", "0001-i", "0002-i"]
        assert [i.name for i in await repos.instances.page(conn, query)] == ["db-web", "WEB-2", "web-1"]
        await repos.instances.update(conn, "0003-i", name="db-webby")
        await repos.instances.update(conn, "0000-i", name="api-1")
        await repos.instances.delete(conn, "0001-i")
        assert [i.name for i in await repos.instances.page(conn, query)] == ["db-webby", "db-web"]
        assert await name_search.matching(conn, repos.instances.table, "name", "web", 1) is None  # too many
        assert await name_search.matching(conn, repos.instances.table, "name", "we", 10) is None  # too short


async def test_a_store_without_the_substring_index_finds_names_the_plain_way(database: Database) -> None:
    # The explorer's in-memory store leaves the index out (store_footprint.RecordingDatabase): a search
    # there is the same page, read the plain way, not an error.
    from tether.domain.compute import Instance
    from tether.store import name_search

    rows = [Instance(uuid=f"{index:04d}-i", name=name, project_id="p", user_id="u", flavor_id="f", image_id="i",
                     created_at=float(index), updated_at=float(index))
            for index, name in enumerate(["web-1", "db-1", "db-web"])]
    query = ListQuery(filters={"name": Contains("web")}, sort=(SortKey("created_at", False), SortKey("uuid")))
    async with database.begin() as conn:
        await conn.run_sync(name_search.uninstall)
        await repos.instances.add_all(conn, rows)
        if conn.dialect.name == "sqlite":
            assert await name_search.matching(conn, repos.instances.table, "name", "web", 10) is None
        assert [i.name for i in await repos.instances.page(conn, query)] == ["db-web", "web-1"]
