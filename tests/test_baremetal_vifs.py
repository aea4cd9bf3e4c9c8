"""VIF attach and detach against the real network service."""

from __future__ import annotations

from tests.baremetal_bench import ADMIN, HOST, MEMBER, Bench, nic_mac
from tether.domain.baremetal import TENANT_VIF_KEY
from tether.domain.errors import baremetal as be
from tether.domain.errors import network as ne
from tether.store import intents, repos


async def test_attach_sets_the_port_mac_to_the_nic_and_binds_it_to_the_node(database) -> None:
    bench = Bench(database)
    (port,) = await bench.network_with_ports(1)
    node = await bench.available_node()

    await bench.do(bench.baremetal.vif_attach(ADMIN, node.uuid, port.id))

    attached = await bench.port(port.id)
    assert attached.mac_address == nic_mac("n1", 0) != port.mac_address
    assert attached.binding_host_id == node.uuid
    assert attached.binding_vnic_type == "baremetal"
    assert attached.binding_profile == {
        "local_link_information": [{"switch_id": "aa:bb:cc:dd:ee:ff", "port_id": "n1-Gig0/0"}]
    }
    (nic,) = await bench.nics(node.uuid)
    assert nic.internal_info == {TENANT_VIF_KEY: port.id}
    assert await bench.do(bench.baremetal.vif_list(ADMIN, "n1")) == [port.id]
    assert (await bench.node(node.uuid)).reservation is None


async def test_detach_removes_the_record_unbinds_and_resets_the_mac(database) -> None:
    bench = Bench(database)
    (port,) = await bench.network_with_ports(1)
    node = await bench.available_node()
    await bench.do(bench.baremetal.vif_attach(ADMIN, node.uuid, port.id))

    await bench.do(bench.baremetal.vif_detach(ADMIN, "n1", port.id))

    released = await bench.port(port.id)
    assert (released.binding_host_id, released.binding_profile) == ("", {})
    assert released.mac_address != nic_mac("n1", 0)
    assert await bench.do(bench.baremetal.vif_list(ADMIN, node.uuid)) == []


async def test_detaching_a_vif_that_is_not_attached_says_so_in_ironics_words(database) -> None:
    bench = Bench(database)
    node = await bench.available_node()
    vif = "0f0f0f0f-0000-4000-8000-000000000009"
    error = await bench.fails(bench.baremetal.vif_detach(ADMIN, node.uuid, vif))
    assert isinstance(error, be.VifNotAttached)
    assert str(error) == (
        f"Unable to detach VIF {vif} from node {node.uuid} because it is not attached to it."
    )
    assert error.status == 400


async def test_no_free_nic_means_no_free_physical_ports_and_the_port_is_untouched(database) -> None:
    bench = Bench(database)
    first, second = await bench.network_with_ports(2)
    node = await bench.available_node()
    await bench.do(bench.baremetal.vif_attach(ADMIN, node.uuid, first.id))

    error = await bench.fails(bench.baremetal.vif_attach(ADMIN, node.uuid, second.id))

    assert isinstance(error, be.NoFreePhysicalPorts)
    assert str(error) == f"Unable to attach VIF {second.id}, not enough free physical ports."
    untouched = await bench.port(second.id)
    assert (untouched.mac_address, untouched.binding_host_id) == (second.mac_address, "")
    assert await bench.do(bench.baremetal.vif_list(ADMIN, node.uuid)) == [first.id]


async def test_the_vif_goes_on_the_nic_of_its_networks_physnet(database) -> None:
    bench = Bench(database)
    (port,) = await bench.network_with_ports(1, physnet="physnet2")
    node = await bench.available_node(nics=3, physnets=["physnet1", "physnet2", None])

    await bench.do(bench.baremetal.vif_attach(ADMIN, node.uuid, port.id))

    assert (await bench.port(port.id)).mac_address == nic_mac("n1", 1)
    holders = [nic for nic in await bench.nics(node.uuid) if nic.vif == port.id]
    assert [nic.physical_network for nic in holders] == ["physnet2"]


async def test_a_portgroup_is_preferred_and_lends_its_address(database) -> None:
    bench = Bench(database)
    (port,) = await bench.network_with_ports(1)
    node = await bench.available_node(nics=1)
    bm = bench.baremetal

    async def bond() -> str:
        pg = await bm.create_portgroup(ADMIN, node_uuid=node.uuid, name="bond0", address="52:54:00:bb:00:01")
        for i in range(2):
            await bm.create_port(ADMIN, address=f"52:54:00:bb:01:0{i}", node_uuid=node.uuid,
                                 portgroup_uuid="bond0", local_link_connection={"port_id": f"bond-{i}"})
        return pg.uuid

    pg_uuid = await bench.do(bond())
    await bench.do(bm.vif_attach(ADMIN, node.uuid, port.id))

    attached = await bench.port(port.id)
    assert attached.mac_address == "52:54:00:bb:00:01"
    links = attached.binding_profile["local_link_information"]
    assert sorted(link["port_id"] for link in links) == ["bond-0", "bond-1"]
    assert (await bench.do(bm.get_portgroup(ADMIN, pg_uuid))).vif == port.id


async def test_a_legacy_portgroup_with_mixed_physnets_is_refused(database) -> None:
    bench = Bench(database)
    (port,) = await bench.network_with_ports(1, physnet="physnet1")
    node = await bench.available_node(nics=0)
    bm = bench.baremetal

    async def legacy() -> None:
        pg = await bm.create_portgroup(ADMIN, node_uuid=node.uuid, address="52:54:00:cc:00:01")
        await bm.create_port(ADMIN, address="52:54:00:cc:01:00", node_uuid=node.uuid,
                             portgroup_uuid=pg.uuid, physical_network="physnet1")
        # Ironic refuses a second physnet in one portgroup today...
        error = None
        try:
            await bm.create_port(ADMIN, address="52:54:00:cc:01:01", node_uuid=node.uuid,
                                 portgroup_uuid=pg.uuid, physical_network="physnet2")
        except be.PortgroupPhysnetConflict as refused:
            error = refused
        assert error is not None and error.status == 409
        # ...but one made before it did is still about: move a NIC in behind its back.
        lone = await bm.create_port(ADMIN, address="52:54:00:cc:01:02", node_uuid=node.uuid,
                                    physical_network="physnet2")
        async with bench.store.begin() as conn:
            await repos.node_ports.update(conn, lone.uuid, portgroup_uuid=pg.uuid)

    await bench.do(legacy())
    error = await bench.fails(bm.vif_attach(ADMIN, node.uuid, port.id))

    assert isinstance(error, be.PortgroupPhysnetInconsistent)
    assert (await bench.port(port.id)).mac_address == port.mac_address


async def test_attaching_the_same_vif_twice_is_a_conflict(database) -> None:
    bench = Bench(database)
    (port,) = await bench.network_with_ports(1)
    node = await bench.available_node(nics=2)
    await bench.do(bench.baremetal.vif_attach(ADMIN, node.uuid, port.id))
    error = await bench.fails(bench.baremetal.vif_attach(ADMIN, node.uuid, port.id))
    assert isinstance(error, be.VifAlreadyAttached)
    assert error.status == 409
    assert await bench.do(bench.baremetal.vif_list(ADMIN, node.uuid)) == [port.id]


async def test_a_failure_after_the_mac_change_leaves_no_half_attached_vif(database) -> None:
    bench = Bench(database)
    (port,) = await bench.network_with_ports(1)
    node = await bench.available_node()
    network = bench.network
    real_bind = network.bind_port

    async def someone_else_took_it(port_id, **kwargs):  # the network side refuses; bare metal is real
        raise ne.PortInUse(port_id=port_id, net_id=port.network_id, device_id="another-instance")

    network.bind_port = someone_else_took_it
    try:
        error = await bench.fails(bench.baremetal.vif_attach(ADMIN, node.uuid, port.id))
    finally:
        network.bind_port = real_bind

    assert isinstance(error, be.NetworkError)
    assert str(error).startswith(f"Could not add public network VIF {port.id} to node {node.uuid}")
    assert "Port already has an attached device another-instance." in str(error)
    assert await bench.do(bench.baremetal.vif_list(ADMIN, node.uuid)) == []
    undone = await bench.port(port.id)
    assert undone.mac_address != nic_mac("n1", 0)
    assert undone.binding_host_id == ""


async def test_a_vif_whose_port_does_not_exist_is_refused(database) -> None:
    bench = Bench(database)
    node = await bench.available_node()
    vif = "0f0f0f0f-0000-4000-8000-00000000000a"
    error = await bench.fails(bench.baremetal.vif_attach(ADMIN, node.uuid, vif))
    assert isinstance(error, be.InvalidParameterValue)
    assert str(error) == f"Neutron port {vif} was not found"


async def test_vif_attach_and_detach_during_cleaning_find_the_node_locked(database) -> None:
    bench = Bench(database, clean_seconds=30)
    first, second = await bench.network_with_ports(2)
    node = await bench.deployed_node([first])
    bm = bench.baremetal
    outcomes: list[BaseException] = []

    async def compute_meanwhile() -> None:
        await bench.rt.sleep(10)
        for attempt in (bm.vif_attach(ADMIN, node.uuid, second.id), bm.vif_detach(ADMIN, node.uuid, first.id)):
            try:
                await attempt
            except be.NodeLocked as error:
                outcomes.append(error)

    bench.spawn(bm.set_provision_state(ADMIN, node.uuid, "deleted"))
    bench.spawn(compute_meanwhile(), "compute")
    await bench.run()

    assert [str(error) for error in outcomes] == [
        f"Node {node.uuid} is locked by host {HOST}, please retry after the current operation is completed."
    ] * 2
    assert all(error.status == 409 for error in outcomes)
    # Once cleaning is over the node is free again.
    await bench.do(bm.vif_attach(ADMIN, node.uuid, second.id))
    assert await bench.do(bm.vif_list(ADMIN, node.uuid)) == [second.id]


async def test_bare_metal_apis_are_for_admins_only(database) -> None:
    bench = Bench(database)
    (port,) = await bench.network_with_ports(1)
    node = await bench.available_node()
    error = await bench.fails(bench.baremetal.vif_attach(MEMBER, node.uuid, port.id))
    assert isinstance(error, be.HTTPForbidden)
    assert error.status == 403
    assert await bench.do(bench.baremetal.vif_list(ADMIN, node.uuid)) == []
    assert (await bench.port(port.id)).mac_address == port.mac_address


async def test_a_fault_before_the_mac_update_leaves_nothing_behind(database) -> None:
    bench = Bench(database)
    (port,) = await bench.network_with_ports(1)
    node = await bench.available_node()
    bench.fault("baremetal.vif_attach.before_mac_update=error*1")

    error = await bench.fails(bench.baremetal.vif_attach(ADMIN, node.uuid, port.id))

    assert str(error) == "Injected fault at baremetal.vif_attach.before_mac_update"
    assert await bench.do(bench.baremetal.vif_list(ADMIN, node.uuid)) == []
    assert (await bench.port(port.id)).mac_address == port.mac_address

    async def pending() -> list:
        async with bench.store.begin() as conn:
            return await intents.pending(conn)

    assert await bench.do(pending()) == []
    assert (await bench.node(node.uuid)).reservation is None


async def test_a_port_deleted_while_the_attach_waits_is_not_attached(database) -> None:
    bench = Bench(database)
    (port,) = await bench.network_with_ports(1)
    node = await bench.available_node()
    bench.fault("baremetal.vif_attach.before_mac_update=sleep:5*1")

    async def user_deletes_the_port() -> None:
        await bench.rt.sleep(1)
        await bench.network.delete_port(ADMIN, port.id)

    attach = bench.spawn(bench.baremetal.vif_attach(ADMIN, node.uuid, port.id), "attach")
    bench.spawn(user_deletes_the_port(), "user")
    await bench.run()

    assert isinstance(attach.error, be.InvalidParameterValue)
    assert str(attach.error) == f"Neutron port {port.id} was not found"
    assert await bench.do(bench.baremetal.vif_list(ADMIN, node.uuid)) == []
    assert await bench.port(port.id) is None
