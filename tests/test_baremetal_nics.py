"""A node's NICs (ironic ports) and portgroups."""

from __future__ import annotations

from tests.baremetal_bench import ADMIN, Bench, nic_mac
from tether.domain.errors import baremetal as be


async def test_a_nic_is_created_with_a_normalised_mac_and_listed_by_node_name(database) -> None:
    bench = Bench(database)
    bm = bench.baremetal
    node = await bench.do(bm.create_node(ADMIN, name="n1"))
    port = await bench.do(bm.create_port(ADMIN, address="52-54-00-AB-CD-EF", node_uuid="n1",
                                         physical_network="physnet1"))
    assert (port.address, port.node_uuid, port.pxe_enabled) == ("52:54:00:ab:cd:ef", node.uuid, True)
    assert await bench.do(bm.list_ports(ADMIN, node="n1")) == [port]
    assert await bench.do(bm.list_ports(ADMIN, address="52:54:00:ab:cd:ef")) == [port]
    assert await bench.do(bm.get_port(ADMIN, port.uuid)) == port


async def test_bad_nic_input_is_refused_and_creates_nothing(database) -> None:
    bench = Bench(database)
    bm = bench.baremetal
    await bench.do(bm.create_node(ADMIN, name="n1"))
    await bench.do(bm.create_port(ADMIN, address="52:54:00:00:00:01", node_uuid="n1"))
    attempts = [
        (bm.create_port(ADMIN, address="not-a-mac", node_uuid="n1"), be.InvalidMAC,
         "Expected a MAC address but received not-a-mac."),
        (bm.create_port(ADMIN, address="52:54:00:00:00:01", node_uuid="n1"), be.MACAlreadyExists,
         "A port with MAC address 52:54:00:00:00:01 already exists."),
        (bm.create_port(ADMIN, address="52:54:00:00:00:02", node_uuid="ghost"), be.NodeNotFound, None),
        (bm.create_port(ADMIN, address="52:54:00:00:00:02", node_uuid="n1", pxe_enabled="yes"),
         be.InvalidParameterValue, None),
        (bm.create_port(ADMIN, address="52:54:00:00:00:02", node_uuid="n1", portgroup_uuid="nope"),
         be.PortgroupNotFound, None),
    ]
    for attempt, expected, words in attempts:
        error = await bench.fails(attempt)
        assert isinstance(error, expected), (expected, error)
        assert error.status in (400, 404, 409)
        if words is not None:
            assert str(error) == words
    assert [port.address for port in await bench.do(bm.list_ports(ADMIN))] == ["52:54:00:00:00:01"]


async def test_a_nic_update_is_a_json_patch_and_a_bad_one_changes_nothing(database) -> None:
    bench = Bench(database)
    bm = bench.baremetal
    await bench.do(bm.create_node(ADMIN, name="n1"))
    port = await bench.do(bm.create_port(ADMIN, address="52:54:00:00:00:01", node_uuid="n1"))
    await bench.do(bm.create_port(ADMIN, address="52:54:00:00:00:02", node_uuid="n1"))
    updated = await bench.do(bm.update_port(ADMIN, port.uuid, [
        {"op": "replace", "path": "/pxe_enabled", "value": False},
        {"op": "add", "path": "/physical_network", "value": "physnet1"},
    ]))
    assert (updated.pxe_enabled, updated.physical_network) == (False, "physnet1")
    for patch, expected in [
        ([{"op": "replace", "path": "/address", "value": "52:54:00:00:00:02"}], be.MACAlreadyExists),
        ([{"op": "replace", "path": "/extra", "value": {}}, {"op": "replace", "path": "/node_uuid", "value": "x"}],
         be.InvalidParameterValue),
        ([{"op": "remove", "path": "/address"}], be.InvalidParameterValue),
    ]:
        assert isinstance(await bench.fails(bm.update_port(ADMIN, port.uuid, patch)), expected)
    assert await bench.do(bm.get_port(ADMIN, port.uuid)) == updated


async def test_a_nic_holding_a_vif_is_not_rewired_or_deleted_unless_in_maintenance(database) -> None:
    bench = Bench(database)
    (vif,) = await bench.network_with_ports(1)
    node = await bench.available_node()
    bm = bench.baremetal
    await bench.do(bm.vif_attach(ADMIN, node.uuid, vif.id))
    (nic,) = await bench.do(bm.list_ports(ADMIN, node=node.uuid))

    error = await bench.fails(bm.update_port(ADMIN, nic.uuid, [
        {"op": "replace", "path": "/address", "value": "52:54:00:99:99:99"}]))
    assert isinstance(error, be.InvalidState) and error.status == 409
    error = await bench.fails(bm.delete_port(ADMIN, nic.uuid))
    assert isinstance(error, be.InvalidState) and error.status == 409
    assert str(error) == f"Cannot delete the port {nic.uuid} as it is bound to VIF {vif.id} for tenant use."
    assert await bench.do(bm.vif_list(ADMIN, node.uuid)) == [vif.id]

    await bench.do(bm.set_maintenance(ADMIN, node.uuid, True))
    await bench.do(bm.delete_port(ADMIN, nic.uuid))
    assert await bench.do(bm.list_ports(ADMIN, node=node.uuid)) == []
    released = await bench.port(vif.id)
    assert (released.binding_host_id, released.mac_address != nic_mac("n1", 0)) == ("", True)


async def test_portgroups_keep_one_physnet_and_are_deleted_only_when_empty(database) -> None:
    bench = Bench(database)
    bm = bench.baremetal
    await bench.do(bm.create_node(ADMIN, name="n1"))
    pg = await bench.do(bm.create_portgroup(ADMIN, node_uuid="n1", name="bond0", address="52:54:00:bb:00:01"))
    member = await bench.do(bm.create_port(ADMIN, address="52:54:00:bb:01:00", node_uuid="n1",
                                           portgroup_uuid="bond0", physical_network="physnet1"))
    assert member.portgroup_uuid == pg.uuid
    error = await bench.fails(bm.create_port(ADMIN, address="52:54:00:bb:01:01", node_uuid="n1",
                                             portgroup_uuid=pg.uuid, physical_network="physnet2"))
    assert isinstance(error, be.PortgroupPhysnetConflict)
    error = await bench.fails(bm.create_portgroup(ADMIN, node_uuid="n1", name="bond0"))
    assert isinstance(error, be.PortgroupDuplicateName)
    error = await bench.fails(bm.create_portgroup(ADMIN, node_uuid="n1", address="52:54:00:bb:00:01"))
    assert isinstance(error, be.PortgroupMACAlreadyExists)
    assert await bench.do(bm.list_portgroups(ADMIN, node="n1")) == [pg]
    assert await bench.do(bm.list_ports(ADMIN, portgroup="bond0")) == [member]

    error = await bench.fails(bm.delete_portgroup(ADMIN, "bond0"))
    assert isinstance(error, be.PortgroupNotEmpty)
    await bench.do(bm.delete_port(ADMIN, member.uuid))
    await bench.do(bm.delete_portgroup(ADMIN, "bond0"))
    assert await bench.do(bm.list_portgroups(ADMIN)) == []
