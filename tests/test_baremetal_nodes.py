"""Nodes: enrolment, lookup, JSON-patch updates, deletion, maintenance, and compute's claims."""

from __future__ import annotations

from tests.baremetal_bench import ADMIN, MEMBER, Bench, nic_mac
from tether.domain.baremetal_states import ENROLL, MANAGEABLE
from tether.domain.errors import baremetal as be

INSTANCE = "11111111-2222-4333-8444-555555555555"
OTHER_INSTANCE = "11111111-2222-4333-8444-666666666666"


async def test_a_new_node_is_enrolled_and_found_by_uuid_or_name(database) -> None:
    bench = Bench(database)
    bm = bench.baremetal
    node = await bench.do(bm.create_node(ADMIN, name="rack1-n1", resource_class="baremetal",
                                         properties={"cpus": 8}))
    assert (node.provision_state, node.driver, node.instance_uuid) == (ENROLL, "fake-hardware", None)
    assert node.provision_updated_at == node.created_at == bench.rt.now()
    assert await bench.do(bm.get_node(ADMIN, "rack1-n1")) == node
    assert await bench.do(bm.get_node(ADMIN, node.uuid.upper())) == node
    error = await bench.fails(bm.get_node(ADMIN, "nope"))
    assert isinstance(error, be.NodeNotFound) and str(error) == "Node nope could not be found."


async def test_bad_node_input_is_refused_and_creates_nothing(database) -> None:
    bench = Bench(database)
    bm = bench.baremetal
    await bench.do(bm.create_node(ADMIN, name="n1"))
    attempts = [
        (bm.create_node(ADMIN, name="n1"), be.DuplicateName),
        (bm.create_node(ADMIN, name="has space"), be.InvalidParameterValue),
        (bm.create_node(ADMIN, driver="ipmi"), be.DriverNotFound),
        (bm.create_node(ADMIN, uuid="not-a-uuid"), be.InvalidUUID),
        (bm.create_node(ADMIN, properties=["not", "a", "dict"]), be.InvalidParameterValue),
        (bm.create_node(ADMIN, chassis_uuid="0f0f0f0f-0000-4000-8000-000000000001"), be.ChassisNotFound),
        (bm.create_node(MEMBER, name="n2"), be.HTTPForbidden),
    ]
    for attempt, expected in attempts:
        error = await bench.fails(attempt)
        assert isinstance(error, expected), (expected, error)
    assert str(await bench.fails(bm.create_node(ADMIN, name="n1"))) == "A node with name n1 already exists."
    assert [node.name for node in await bench.do(bm.list_nodes(ADMIN))] == ["n1"]


async def test_list_nodes_filters(database) -> None:
    bench = Bench(database)
    bm = bench.baremetal
    free = await bench.available_node("free")
    held = await bench.available_node("held", resource_class="gpu")
    await bench.do(bm.claim_node(held.uuid, INSTANCE))

    async def names(**filters) -> list[str]:
        return [node.name for node in await bench.do(bm.list_nodes(ADMIN, **filters))]

    assert await names() == ["free", "held"]
    assert await names(instance_uuid=INSTANCE) == ["held"]
    assert await names(associated=True) == ["held"]
    assert await names(associated=False) == ["free"]
    assert await names(resource_class="gpu") == ["held"]
    assert await names(maintenance=True) == []
    assert await names(provision_state="available") == ["free", "held"]
    assert free.uuid != held.uuid


async def test_a_json_patch_updates_what_ironic_lets_it(database) -> None:
    bench = Bench(database)
    bm = bench.baremetal
    node = await bench.do(bm.create_node(ADMIN, name="n1", properties={"cpus": 4}))
    updated = await bench.do(bm.update_node(ADMIN, "n1", [
        {"op": "replace", "path": "/name", "value": "n1-renamed"},
        {"op": "add", "path": "/properties/memory_mb", "value": 4096},
        {"op": "add", "path": "/instance_uuid", "value": INSTANCE},
        {"op": "add", "path": "/instance_info/image_source", "value": "cirros"},
        {"op": "replace", "path": "/resource_class", "value": "baremetal"},
        {"op": "add", "path": "/extra/rack", "value": "r1"},
    ]))
    assert updated.name == "n1-renamed"
    assert updated.properties == {"cpus": 4, "memory_mb": 4096}
    assert (updated.instance_uuid, updated.instance_info) == (INSTANCE, {"image_source": "cirros"})
    assert (updated.resource_class, updated.extra) == ("baremetal", {"rack": "r1"})
    assert updated.reservation is None
    removed = await bench.do(bm.update_node(ADMIN, node.uuid, [{"op": "remove", "path": "/instance_uuid"}]))
    assert removed.instance_uuid is None


async def test_a_patch_that_fails_anywhere_changes_nothing(database) -> None:
    bench = Bench(database)
    bm = bench.baremetal
    first = await bench.do(bm.create_node(ADMIN, name="n1", extra={"a": 1}))
    second = await bench.do(bm.create_node(ADMIN, name="n2"))
    await bench.do(bm.update_node(ADMIN, "n2", [{"op": "add", "path": "/instance_uuid", "value": INSTANCE}]))
    rename = {"op": "replace", "path": "/name", "value": "renamed"}
    attempts = [
        ([rename, {"op": "replace", "path": "/provision_state", "value": "active"}], be.InvalidParameterValue,
         "'/provision_state' is an internal attribute and can not be updated"),
        ([rename, {"op": "add", "path": "/colour", "value": "red"}], be.InvalidParameterValue,
         "Adding a new attribute (/colour) to the root of the resource is not allowed"),
        ([rename, {"op": "remove", "path": "/extra/missing"}], be.PatchError, None),
        ([rename, {"op": "add", "path": "/instance_uuid", "value": INSTANCE}], be.InstanceAssociated,
         f"Instance {INSTANCE} is already associated with a node, it cannot be associated with this "
         f"other node {first.uuid}"),
        ([{"op": "replace", "path": "/name", "value": "n2"}], be.DuplicateName, None),
        ([rename, {"op": "replace", "path": "/maintenance", "value": "yes"}], be.InvalidParameterValue, None),
        ([rename, {"op": "replace", "path": "/extra", "value": "flat"}], be.InvalidParameterValue, None),
        ("not a patch", be.PatchError, None),
    ]
    for patch, expected, words in attempts:
        error = await bench.fails(bm.update_node(ADMIN, "n1", patch))
        assert isinstance(error, expected), (patch, error)
        if words is not None:
            assert str(error) == words
    assert await bench.node(first.uuid) == first
    # A node that already has an instance cannot be given another.
    error = await bench.fails(bm.update_node(ADMIN, second.uuid, [
        {"op": "replace", "path": "/instance_uuid", "value": OTHER_INSTANCE}]))
    assert isinstance(error, be.NodeAssociated)
    assert str(error) == f"Node {second.uuid} is associated with instance {INSTANCE}."
    assert (await bench.node(second.uuid)).instance_uuid == INSTANCE


async def test_a_node_with_an_instance_cannot_be_deleted_unless_in_maintenance(database) -> None:
    bench = Bench(database)
    (port,) = await bench.network_with_ports(1)
    node = await bench.available_node()
    bm = bench.baremetal
    await bench.do(bm.claim_node(node.uuid, INSTANCE))
    await bench.do(bm.vif_attach(ADMIN, node.uuid, port.id))

    error = await bench.fails(bm.delete_node(ADMIN, node.uuid))
    assert isinstance(error, be.NodeAssociated)
    assert error.status == 409
    assert (await bench.node(node.uuid)).instance_uuid == INSTANCE

    await bench.do(bm.set_maintenance(ADMIN, node.uuid, True, reason="decommission"))
    await bench.do(bm.delete_node(ADMIN, node.uuid))

    assert await bench.do(bm.find_node(node.uuid)) is None
    assert await bench.do(bm.list_ports(ADMIN)) == []
    # rule 2: the port the node's NIC carried is released, not left bound to a ghost.
    released = await bench.port(port.id)
    assert released.binding_host_id == ""
    assert released.mac_address != nic_mac("n1", 0)


async def test_only_a_node_at_rest_may_be_deleted(database) -> None:
    bench = Bench(database)
    (port,) = await bench.network_with_ports(1)
    node = await bench.deployed_node([port])
    bm = bench.baremetal
    await bench.do(bm.release_node(node.uuid, node.instance_uuid))
    error = await bench.fails(bm.delete_node(ADMIN, node.uuid))
    assert isinstance(error, be.NodeInWrongStateForDelete)
    assert 'while it is in provision state "active"' in str(error)
    assert (await bench.node(node.uuid)).provision_state == "active"
    enrolled = await bench.do(bm.create_node(ADMIN, name="fresh"))
    await bench.do(bm.delete_node(ADMIN, "fresh"))
    assert await bench.do(bm.find_node(enrolled.uuid)) is None


async def test_maintenance_is_set_with_a_reason_and_cleared_with_it(database) -> None:
    bench = Bench(database)
    bm = bench.baremetal
    node = await bench.do(bm.create_node(ADMIN, name="n1"))
    on = await bench.do(bm.set_maintenance(ADMIN, "n1", True, reason="fan"))
    assert (on.maintenance, on.maintenance_reason) == (True, "fan")
    off = await bench.do(bm.set_maintenance(ADMIN, node.uuid, False))
    assert (off.maintenance, off.maintenance_reason) == (False, None)


async def test_compute_claims_a_free_node_once_and_releases_only_its_own(database) -> None:
    bench = Bench(database)
    bm = bench.baremetal
    first = await bench.available_node("a")
    second = await bench.available_node("b")
    await bench.available_node("c", resource_class="gpu")
    managed = await bench.do(bm.create_node(ADMIN, name="d", resource_class="baremetal"))
    await bench.do(bm.set_provision_state(ADMIN, managed.uuid, "manage"))

    free = await bench.do(bm.find_free_nodes("baremetal"))
    assert [node.name for node in free] == ["a", "b"]
    assert await bench.do(bm.claim_node(first.uuid, INSTANCE, {"image_source": "cirros"}))
    assert not await bench.do(bm.claim_node(first.uuid, OTHER_INSTANCE))  # someone else won
    assert await bench.do(bm.claim_node(first.uuid, INSTANCE))  # asking twice is no harm
    assert not await bench.do(bm.claim_node(second.uuid, INSTANCE))  # one node per instance
    assert not await bench.do(bm.claim_node(managed.uuid, OTHER_INSTANCE))  # not available
    assert (await bench.node(managed.uuid)).provision_state == MANAGEABLE
    assert [node.name for node in await bench.do(bm.find_free_nodes("baremetal"))] == ["b"]
    claimed = await bench.node(first.uuid)
    assert (claimed.instance_uuid, claimed.instance_info) == (INSTANCE, {"image_source": "cirros"})

    await bench.do(bm.release_node(first.uuid, OTHER_INSTANCE))  # not its own: nothing happens
    assert (await bench.node(first.uuid)).instance_uuid == INSTANCE
    await bench.do(bm.release_node(first.uuid, INSTANCE))
    released = await bench.node(first.uuid)
    assert (released.instance_uuid, released.instance_info) == (None, {})


async def test_chassis_hold_nodes_and_cannot_go_while_they_do(database) -> None:
    bench = Bench(database)
    bm = bench.baremetal
    chassis = await bench.do(bm.create_chassis(ADMIN, description="rack 1"))
    node = await bench.do(bm.create_node(ADMIN, name="n1", chassis_uuid=chassis.uuid))
    assert await bench.do(bm.list_chassis(ADMIN)) == [chassis]
    error = await bench.fails(bm.delete_chassis(ADMIN, chassis.uuid))
    assert isinstance(error, be.ChassisNotEmpty)
    await bench.do(bm.delete_node(ADMIN, node.uuid))
    await bench.do(bm.delete_chassis(ADMIN, chassis.uuid))
    assert isinstance(await bench.fails(bm.get_chassis(ADMIN, chassis.uuid)), be.ChassisNotFound)
