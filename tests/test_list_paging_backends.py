"""Paging through the real APIs on both backends: a `tether serve` on SQLite and one on PostgreSQL, each
listed page by page through openstacksdk (markers, sort keys and directions, page_reverse, filters), and
every walk gives exactly the rows of the unpaged list, in the same order."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from datetime import datetime

import pytest

from tests.conftest import PG_URL, REQUIRE_PG, pg_available
from tests.live import LiveCloud, start


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def cloud(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveCloud]:
    if request.param == "sqlite":
        live = start(tmp_path_factory.mktemp("sqlite"))
        yield live
        live.stop()
        return
    if not asyncio.run(pg_available()):
        if REQUIRE_PG:
            pytest.fail(f"PostgreSQL is required but not reachable at {PG_URL}")
        pytest.skip(f"no PostgreSQL at {PG_URL}")
    import asyncpg

    name = f"tether_lists_{uuid.uuid4().hex[:12]}"

    async def admin(statement: str) -> None:
        conn = await asyncpg.connect(PG_URL.replace("postgresql://", "postgres://"))
        try:
            await conn.execute(statement)
        finally:
            await conn.close()

    asyncio.run(admin(f'CREATE DATABASE "{name}"'))
    try:
        live = start(tmp_path_factory.mktemp("postgresql"), db=PG_URL.rsplit("/", 1)[0] + f"/{name}")
        try:
            yield live
        finally:
            live.stop()
    finally:
        asyncio.run(admin(f'DROP DATABASE "{name}" WITH (FORCE)'))


def _walk(get, path: str, key: str, links: str | None, marker_of=lambda item: item["id"]) -> list[dict]:
    """Every item of a list followed page by page: the marker is the last item's id."""
    found: list[dict] = []
    marker = None
    for _ in range(100):
        query = path + (f"&marker={marker}" if marker else "")
        body = get(query).json()
        page = body[key]
        found += page
        if not page or (links is not None and not any(link["rel"] == "next" for link in body.get(links, []))):
            return found
        if links is None and "next" not in body:
            return found
        marker = marker_of(page[-1])
    raise AssertionError("the pages never ended")


def test_network_ports_page_in_every_order_on_both_backends(cloud: LiveCloud) -> None:
    sdk = cloud.connect()
    try:
        network = sdk.network.create_network(name=f"paging-{uuid.uuid4().hex[:6]}")
        names = ["b", "a", "c", "a", "b", "d", "a"]
        made = [sdk.network.create_port(network_id=network.id, name=name) for name in names]
        get = sdk.network.get
        base = f"/ports?network_id={network.id}"
        for order in ("", "&sort_key=name&sort_dir=asc", "&sort_key=name&sort_dir=desc&sort_key=id&sort_dir=asc",
                      "&sort_key=mac_address&sort_dir=desc"):
            whole = get(base + order).json()["ports"]
            assert len(whole) == len(made)
            paged = _walk(get, f"{base}{order}&limit=2", "ports", "ports_links")
            assert [port["id"] for port in paged] == [port["id"] for port in whole], order
        by_name = sorted(made, key=lambda port: (port.name, port.id))
        assert [port["id"] for port in get(f"{base}&sort_key=name&sort_dir=asc").json()["ports"]] == \
            [port.id for port in by_name]
        # page_reverse: the page just before the marker, still in the list's order
        before = get(f"{base}&sort_key=name&sort_dir=asc&limit=2&marker={by_name[4].id}&page_reverse=True").json()
        assert [port["id"] for port in before["ports"]] == [port.id for port in by_name[2:4]]
        # a filter with a page: only the named ports, two at a time
        named_a = _walk(get, f"{base}&name=a&limit=2", "ports", "ports_links")
        assert sorted(port["id"] for port in named_a) == sorted(port.id for port in made if port.name == "a")
    finally:
        sdk.close()


def test_baremetal_nodes_page_by_marker_and_sort_key_on_both_backends(cloud: LiveCloud) -> None:
    sdk = cloud.connect()
    try:
        tag = uuid.uuid4().hex[:6]
        made = [sdk.baremetal.create_node(driver="fake-hardware", name=f"{tag}-{index}",
                                          resource_class=f"paging-{tag}") for index in (3, 1, 2, 0)]
        get = sdk.baremetal.get
        base = f"/nodes?resource_class=paging-{tag}"

        def versioned(path: str):
            return get(path, microversion="1.80")

        whole = versioned(base).json()["nodes"]
        assert [node["uuid"] for node in whole] == [node.id for node in made]  # creation order
        for order in ("", "&sort_key=name&sort_dir=desc", "&sort_key=name", "&sort_dir=desc"):
            listed = versioned(base + order).json()["nodes"]
            paged = _walk(versioned, f"{base}{order}&limit=1", "nodes", None, marker_of=lambda node: node["uuid"])
            assert [node["uuid"] for node in paged] == [node["uuid"] for node in listed], order
        descending = versioned(f"{base}&sort_key=name&sort_dir=desc").json()["nodes"]
        assert [node["name"] for node in descending] == [f"{tag}-{index}" for index in (3, 2, 1, 0)]
        # a marker the filters leave out is not found, as ironic answers
        other = sdk.baremetal.create_node(driver="fake-hardware", name=f"{tag}-other")
        assert versioned(f"{base}&limit=1&marker={other.id}").status_code == 404
    finally:
        sdk.close()


def test_servers_page_newest_first_by_marker_on_both_backends(cloud: LiveCloud) -> None:
    cloud.lift_compute_quotas()
    sdk = cloud.connect()
    try:
        tag = uuid.uuid4().hex[:6]
        image = next(iter(sdk.image.images()))
        flavor = next(iter(sdk.compute.flavors()))
        network = next(network for network in sdk.network.networks() if not network.is_router_external)
        made = [sdk.compute.create_server(name=f"{tag}-{index}", image_id=image.id, flavor_id=flavor.id,
                                          networks=[{"uuid": network.id}]) for index in range(3)]
        get = sdk.compute.get
        whole = get(f"/servers?name={tag}").json()["servers"]
        assert {server["id"] for server in whole} == {server.id for server in made}
        paged = _walk(get, f"/servers?name={tag}&limit=1", "servers", "servers_links")
        assert [server["id"] for server in paged] == [server["id"] for server in whole]
        by_name = get(f"/servers?name={tag}&sort_key=display_name&sort_dir=asc").json()["servers"]
        assert [server["name"] for server in by_name] == [f"{tag}-{index}" for index in range(3)]
        paged = _walk(get, f"/servers?name={tag}&sort_key=display_name&sort_dir=asc&limit=2", "servers",
                      "servers_links")
        assert [server["id"] for server in paged] == [server["id"] for server in by_name]
        for server in made:
            sdk.compute.delete_server(server.id)
    finally:
        sdk.close()



def test_server_name_filters_are_regular_expressions_on_both_backends(cloud: LiveCloud) -> None:
    # nova searches names with a regular expression, anywhere in the name. Plain text (anchored or not) is
    # first looked for through the names' substring index, which ignores case: the expression still decides.
    cloud.lift_compute_quotas()
    sdk = cloud.connect()
    try:
        tag = uuid.uuid4().hex[:6]
        image = next(iter(sdk.image.images()))
        flavor = next(iter(sdk.compute.flavors()))
        network = next(network for network in sdk.network.networks() if not network.is_router_external)
        names = [f"{tag}-web-1", f"{tag}-web-2", f"db-{tag}-web", f"{tag}-db-10"]
        made = {name: sdk.compute.create_server(name=name, image_id=image.id, flavor_id=flavor.id,
                                                networks=[{"uuid": network.id}]) for name in names}
        get = sdk.compute.get

        def listed(pattern: str) -> set[str]:
            response = get("/servers", params={"name": pattern})
            assert response.status_code == 200, response.text
            return {server["name"] for server in response.json()["servers"]}

        assert listed(tag) == set(names)
        assert listed(f"{tag}-web") == {f"{tag}-web-1", f"{tag}-web-2", f"db-{tag}-web"}
        assert listed(f"^{tag}-web") == {f"{tag}-web-1", f"{tag}-web-2"}
        assert listed(f"{tag}-web$") == {f"db-{tag}-web"}
        assert listed(f"^{tag}-web-[2-9]$") == {f"{tag}-web-2"}
        assert listed(f"{tag}-(web|db)-1") == {f"{tag}-web-1", f"{tag}-db-10"}
        assert listed(f"{tag}-db-1.") == {f"{tag}-db-10"}
        assert listed(f"{tag.upper()}-WEB") == set()  # the index ignores case; the expression does not
        assert listed(f"{tag}-web-3") == set()
        # a renamed server is found by its new name only
        sdk.compute.update_server(made[f"{tag}-db-10"], name=f"{tag}-cache-10")
        assert listed(f"{tag}-cache") == {f"{tag}-cache-10"}
        assert listed(f"{tag}-db") == set()
        # the SDK's find by name: a GET by the name (404), then ?name= and its exact match
        assert sdk.compute.find_server(f"{tag}-web-1", ignore_missing=False).id == made[f"{tag}-web-1"].id
        for server in made.values():
            sdk.compute.delete_server(server.id)
    finally:
        sdk.close()


def test_keypairs_and_instance_actions_page_in_the_database_on_both_backends(cloud: LiveCloud) -> None:
    # nova pages keypairs by name from 2.35 and a server's actions newest first from 2.58 (changes-since
    # and changes-before together): every walk is the unpaged list, and a marker the list does not hold
    # is nova's 400.
    cloud.lift_compute_quotas()
    sdk = cloud.connect()
    try:
        tag = uuid.uuid4().hex[:6]
        made = [sdk.compute.create_keypair(name=f"{tag}-{index}") for index in (2, 0, 1)]
        keys = {"OpenStack-API-Version": "compute 2.35"}

        def get_keys(path: str):
            return sdk.compute.get(path, headers=keys, microversion="2.35")

        whole = [k["keypair"]["name"] for k in get_keys("/os-keypairs").json()["keypairs"]]
        assert [name for name in whole if name.startswith(tag)] == [f"{tag}-0", f"{tag}-1", f"{tag}-2"]
        paged = _walk(get_keys, "/os-keypairs?limit=1", "keypairs", "keypairs_links",
                      marker_of=lambda item: item["keypair"]["name"])
        assert [k["keypair"]["name"] for k in paged] == whole
        missing = get_keys(f"/os-keypairs?marker={tag}-9")
        assert missing.status_code == 400
        assert missing.json()["badRequest"]["message"] == f"Marker {tag}-9 could not be found."

        image = next(iter(sdk.image.images()))
        flavor = next(iter(sdk.compute.flavors()))
        server = sdk.compute.create_server(name=f"{tag}-acts", image_id=image.id, flavor_id=flavor.id,
                                           networks="none")
        sdk.compute.wait_for_server(server)
        for _ in range(2):
            sdk.compute.stop_server(server)
            sdk.compute.wait_for_server(server, status="SHUTOFF")
            sdk.compute.start_server(server)
            sdk.compute.wait_for_server(server)
        headers = {"OpenStack-API-Version": "compute 2.58"}

        def get_actions(path: str):
            return sdk.compute.get(path, headers=headers, microversion="2.58")

        base = f"/servers/{server.id}/os-instance-actions"
        actions = get_actions(base).json()["instanceActions"]
        assert [a["action"] for a in actions] == ["start", "stop", "start", "stop", "create"]
        paged = _walk(get_actions, f"{base}?limit=2", "instanceActions", "links",
                      marker_of=lambda item: item["request_id"])
        assert [a["request_id"] for a in paged] == [a["request_id"] for a in actions]
        def between_times(later: dict, earlier: dict) -> str:
            # halfway between two actions' times: the times shown are rounded to the microsecond
            a, b = (datetime.fromisoformat(action["updated_at"]) for action in (later, earlier))
            return (b + (a - b) / 2).isoformat()

        since, before = between_times(actions[3], actions[4]), between_times(actions[0], actions[1])
        between = get_actions(f"{base}?changes-since={since}&changes-before={before}").json()["instanceActions"]
        assert [a["request_id"] for a in between] == [a["request_id"] for a in actions[1:4]]
        walked = _walk(get_actions, f"{base}?changes-since={since}&changes-before={before}&limit=1",
                       "instanceActions", "links", marker_of=lambda item: item["request_id"])
        assert [a["request_id"] for a in walked] == [a["request_id"] for a in actions[1:4]]
        outside = get_actions(f"{base}?changes-since={since}&marker={actions[4]['request_id']}")
        assert outside.status_code == 400
        assert outside.json()["badRequest"]["message"] == f"Marker {actions[4]['request_id']} could not be found."
        sdk.compute.delete_server(server.id)
        for keypair in made:
            sdk.compute.delete_keypair(keypair)
    finally:
        sdk.close()
