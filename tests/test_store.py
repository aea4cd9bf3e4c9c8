"""The store on both backends: typed rows, conditional updates, uniqueness, intents."""

from __future__ import annotations

import pytest
from sqlalchemy.exc import IntegrityError

from tether.domain.network import Port
from tether.runtime.runtime import Runtime
from tether.store import intents, repos
from tether.store.database import DatabaseUrlError, Store, async_url


async def test_rows_round_trip_as_dataclasses(database) -> None:
    store = Store(database, Runtime())
    port = Port(id="p1", name="p1", network_id="n1", project_id="pr", mac_address="fa:16:3e:00:00:01",
                binding_profile={"local_link_information": [{"port_id": "Gig0/1"}]})
    async with store.begin() as conn:
        await repos.ports.add(conn, port)
    async with store.begin() as conn:
        loaded = await repos.ports.get(conn, "p1")
    assert loaded == port


async def test_conditional_update_changes_only_when_expectation_holds(database) -> None:
    store = Store(database, Runtime())
    async with store.begin() as conn:
        await repos.ports.add(conn, Port(id="p1", name="", network_id="n1", project_id="pr",
                                         mac_address="fa:16:3e:00:00:01"))
        assert await repos.ports.update(conn, "p1", expect={"device_id": ""}, device_id="i1")
        assert not await repos.ports.update(conn, "p1", expect={"device_id": ""}, device_id="i2")
        assert (await repos.ports.get(conn, "p1")).device_id == "i1"


async def test_tally_counts_matching_rows_per_group(database) -> None:
    store = Store(database, Runtime())
    async with store.begin() as conn:
        for n, (network, status) in enumerate([("n1", "ACTIVE"), ("n1", "ACTIVE"), ("n1", "DOWN"),
                                               ("n2", "ACTIVE"), ("n2", "DOWN")]):
            await repos.ports.add(conn, Port(id=f"p{n}", name="", network_id=network, project_id="pr",
                                             mac_address=f"fa:16:3e:00:00:0{n}", status=status))
    async with store.begin() as conn:
        by_network = await repos.ports.tally(conn, ("network_id", "status"), project_id="pr")
        active = await repos.ports.tally(conn, ("network_id",), status="ACTIVE")
        none = await repos.ports.tally(conn, ("network_id",), project_id="other")
    assert by_network == [("n1", "ACTIVE", 2), ("n1", "DOWN", 1), ("n2", "ACTIVE", 1), ("n2", "DOWN", 1)]
    assert active == [("n1", 2), ("n2", 1)]
    assert none == []


async def test_a_failed_block_leaves_nothing_and_the_next_transaction_works(database) -> None:
    store = Store(database, Runtime())
    with pytest.raises(RuntimeError, match="boom"):
        async with store.begin() as conn:
            await repos.ports.add(conn, Port(id="p1", name="", network_id="n1", project_id="pr",
                                             mac_address="fa:16:3e:00:00:01"))
            raise RuntimeError("boom")
    async with store.begin() as conn:
        assert await repos.ports.get(conn, "p1") is None
        with pytest.raises(RuntimeError, match="already open"):
            async with store.begin():
                pass
    async with store.begin() as conn:
        assert await repos.ports.count(conn) == 0


async def test_database_refuses_two_ports_with_one_mac_on_a_network(database) -> None:
    store = Store(database, Runtime())
    with pytest.raises(IntegrityError):
        async with store.begin() as conn:
            for port_id in ("p1", "p2"):
                await repos.ports.add(conn, Port(id=port_id, name="", network_id="n1",
                                                 project_id="pr", mac_address="fa:16:3e:00:00:01"))
    async with store.begin() as conn:
        assert await repos.ports.count(conn) == 0  # nothing half-written


async def test_intents_survive_until_forgotten(database) -> None:
    store = Store(database, Runtime())
    async with store.begin() as conn:
        await intents.record(conn, "x1", "build", "i1", {"step": 1}, 10.0)
    async with store.begin() as conn:
        (found,) = await intents.pending(conn)
        assert (found.kind, found.key, found.payload) == ("build", "i1", {"step": 1})
        await intents.forget(conn, "x1")
    async with store.begin() as conn:
        assert await intents.pending(conn) == []


def test_plain_urls_are_accepted_and_nonsense_is_refused() -> None:
    assert async_url("sqlite:////tmp/x.db").startswith("sqlite+pysqlite:")
    assert async_url("postgresql://u@h:5432/db").startswith("postgresql+asyncpg://u@h:5432/db")
    with pytest.raises(DatabaseUrlError):
        async_url("mysql://u@h/db")
    with pytest.raises(DatabaseUrlError):
        async_url("not a url")
