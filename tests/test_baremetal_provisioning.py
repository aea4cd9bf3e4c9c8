"""The conductor's jobs: deploy, tear-down and cleaning, their failures, and recovery after a crash."""

from __future__ import annotations

import pytest

from tests.baremetal_bench import ADMIN, HOST, Bench, nic_mac
from tether.domain.baremetal_states import (
    ACTIVE,
    AVAILABLE,
    CALLBACK_TIMEOUT,
    CLEANFAIL,
    CLEANING,
    DEPLOYFAIL,
    DEPLOYING,
    DEPLOYWAIT,
    ERROR,
    MANAGEABLE,
    POWER_OFF,
    POWER_ON,
)
from tether.domain.errors import baremetal as be

DEPLOY = [
    "available -> deploying (deploy)",
    "deploying -> wait call-back (wait)",
    "wait call-back -> deploying (resume)",
    "deploying -> active (done)",
]
UNDEPLOY = [
    "active -> deleting (delete)",
    "deleting -> cleaning (clean)",
    "cleaning -> available (done)",
]


async def test_deploy_goes_through_wait_call_back_to_active(database) -> None:
    bench = Bench(database, deploy_seconds=10)
    node = await bench.available_node()
    bm = bench.baremetal
    seen: dict[str, object] = {}

    async def look_in_the_middle() -> None:
        await bench.rt.sleep(4)
        mid = await bm.find_node(node.uuid)
        seen.update(state=mid.provision_state, target=mid.target_provision_state,
                    reservation=mid.reservation)

    async def request() -> tuple[float, object]:
        await bm.set_provision_state(ADMIN, node.uuid, "active")
        return bench.rt.now(), await bm.find_node(node.uuid)

    started = bench.rt.now()
    returned = bench.spawn(request())
    bench.spawn(look_in_the_middle(), "observer")
    await bench.run()

    # The request returns at once, like ironic's 202, with the node deploying.
    answered_at, answered = returned.result
    assert answered_at == started
    assert (answered.provision_state, answered.target_provision_state) == (DEPLOYING, ACTIVE)
    # In wait call-back the conductor lets go of the node's lock.
    assert seen == {"state": DEPLOYWAIT, "target": ACTIVE, "reservation": None}
    assert bench.transitions(node.uuid)[-4:] == DEPLOY
    times = bench.transition_times(node.uuid)[-4:]
    assert times == [started, started, started + 10, started + 10]
    final = await bench.node(node.uuid)
    assert (final.provision_state, final.target_provision_state) == (ACTIVE, None)
    assert final.power_state == POWER_ON == bench.hardware.power_state(node.uuid)
    assert final.provision_updated_at == started + 10
    assert final.reservation is None


async def test_undeploy_detaches_every_vif_unbinds_and_resets_macs(database) -> None:
    bench = Bench(database, clean_seconds=5)
    ports = await bench.network_with_ports(2)
    node = await bench.deployed_node(ports)
    addresses = {nic.address for nic in await bench.nics(node.uuid)}
    # Attach set each port's MAC to its NIC's address and bound it to the node.
    for port in ports:
        attached = await bench.port(port.id)
        assert attached.mac_address in addresses
        assert attached.binding_host_id == node.uuid
    assert set(await bench.do(bench.baremetal.vif_list(ADMIN, node.uuid))) == {p.id for p in ports}

    seen: dict[str, object] = {}

    async def look_while_cleaning() -> None:
        await bench.rt.sleep(2)
        mid = await bench.baremetal.find_node(node.uuid)
        seen.update(state=mid.provision_state, target=mid.target_provision_state,
                    reservation=mid.reservation)

    started = bench.rt.now()
    bench.spawn(bench.baremetal.set_provision_state(ADMIN, node.uuid, "deleted"))
    bench.spawn(look_while_cleaning(), "observer")
    await bench.run()

    # Cleaning holds the node's lock and shows who holds it.
    assert seen == {"state": CLEANING, "target": AVAILABLE, "reservation": HOST}
    assert bench.transitions(node.uuid)[-3:] == UNDEPLOY
    assert bench.rt.now() == started + 5
    final = await bench.node(node.uuid)
    assert final.provision_state == AVAILABLE
    assert (final.instance_uuid, final.instance_info) == (None, {})
    assert final.power_state == POWER_OFF
    assert await bench.do(bench.baremetal.vif_list(ADMIN, node.uuid)) == []
    assert all(nic.vif is None for nic in await bench.nics(node.uuid))
    for port in ports:
        released = await bench.port(port.id)
        assert released.binding_host_id == ""
        assert released.binding_profile == {}
        assert released.mac_address not in addresses


async def test_teardown_that_cannot_detach_a_vif_fails_into_error(database) -> None:
    bench = Bench(database)
    ports = await bench.network_with_ports(2)
    node = await bench.deployed_node(ports)
    bench.fault("baremetal.vif_detach.before_unbind=error*1")

    await bench.do(bench.baremetal.set_provision_state(ADMIN, node.uuid, "deleted"))

    failed = await bench.node(node.uuid)
    assert failed.provision_state == ERROR
    assert failed.last_error.startswith("Failed to tear down: ")
    assert "Injected fault at baremetal.vif_detach.before_unbind" in failed.last_error
    # Never available with a VIF left: the node still lists it, and still knows its instance.
    assert set(await bench.do(bench.baremetal.vif_list(ADMIN, node.uuid))) == {p.id for p in ports}
    assert failed.instance_uuid is not None
    assert bench.transitions(node.uuid)[-2:] == ["active -> deleting (delete)", "deleting -> error (fail)"]

    # error has an exit: tearing it down again finishes the job.
    await bench.do(bench.baremetal.set_provision_state(ADMIN, node.uuid, "deleted"))
    assert (await bench.node(node.uuid)).provision_state == AVAILABLE
    assert await bench.do(bench.baremetal.vif_list(ADMIN, node.uuid)) == []


async def test_undeploy_during_wait_call_back_ends_available_and_stops_the_deploy(database) -> None:
    """Seed 003 on ironic's side: the deploy job ends; the node is torn down and clean."""
    bench = Bench(database, deploy_seconds=600, clean_seconds=5)
    ports = await bench.network_with_ports(1)
    node = await bench.available_node()
    bm = bench.baremetal

    async def build() -> None:
        await bm.claim_node(node.uuid, "11111111-2222-4333-8444-555555555555")
        await bm.vif_attach(ADMIN, node.uuid, ports[0].id)
        await bm.set_provision_state(ADMIN, node.uuid, "active")

    async def operator() -> None:
        await bench.rt.sleep(30)
        assert (await bm.find_node(node.uuid)).provision_state == DEPLOYWAIT
        await bm.set_provision_state(ADMIN, node.uuid, "undeploy")

    started = bench.rt.now()
    bench.spawn(build(), "build")
    bench.spawn(operator(), "operator")
    await bench.run()

    final = await bench.node(node.uuid)
    assert final.provision_state == AVAILABLE
    assert final.instance_uuid is None
    assert await bench.do(bm.vif_list(ADMIN, node.uuid)) == []
    assert (await bench.port(ports[0].id)).binding_host_id == ""
    # The deploy job never resumed, and did not sleep on until the ramdisk's call-back time.
    assert "wait call-back -> deploying (resume)" not in bench.transitions(node.uuid)
    assert bench.transitions(node.uuid)[-3:] == [
        "wait call-back -> deleting (delete)", "deleting -> cleaning (clean)", "cleaning -> available (done)",
    ]
    assert bench.rt.now() == started + 30 + 5
    assert any(e.text == f"node {node.uuid}: job stopped, the node changed under it" for e in bench.rt.journal)


async def test_stale_vif_on_terminate_bug_leaves_the_vif_and_blocks_the_next_boot(database) -> None:
    bench = Bench(database, bugs=("stale-vif-on-terminate",))
    ports = await bench.network_with_ports(2)
    node = await bench.deployed_node(ports[:1])

    await bench.do(bench.baremetal.set_provision_state(ADMIN, node.uuid, "deleted"))

    # The symptom of seed 000: available, yet the old VIF is still there...
    assert (await bench.node(node.uuid)).provision_state == AVAILABLE
    assert await bench.do(bench.baremetal.vif_list(ADMIN, node.uuid)) == [ports[0].id]
    # ...so the next instance cannot attach its VIF to the node's only NIC.
    error = await bench.fails(bench.baremetal.vif_attach(ADMIN, node.uuid, ports[1].id))
    assert isinstance(error, be.NoFreePhysicalPorts)
    assert str(error) == f"Unable to attach VIF {ports[1].id}, not enough free physical ports."


async def test_mac_kept_on_unbind_bug_leaves_the_nic_mac_on_the_released_port(database) -> None:
    bench = Bench(database, bugs=("mac-kept-on-unbind",))
    ports = await bench.network_with_ports(2)
    node = await bench.deployed_node(ports[:1])

    await bench.do(bench.baremetal.set_provision_state(ADMIN, node.uuid, "deleted"))

    released = await bench.port(ports[0].id)
    assert released.binding_host_id == ""  # unbound, as before the fix...
    assert released.mac_address == nic_mac("n1", 0)  # ...but it keeps the NIC's MAC (seed 001)
    assert await bench.do(bench.baremetal.vif_list(ADMIN, node.uuid)) == []
    # The next VIF on that NIC cannot take the MAC: neutron's MacAddressInUse.
    error = await bench.fails(bench.baremetal.vif_attach(ADMIN, node.uuid, ports[1].id))
    assert isinstance(error, be.NetworkError)
    assert f"The mac address {nic_mac('n1', 0)} is in use." in str(error)
    assert await bench.do(bench.baremetal.vif_list(ADMIN, node.uuid)) == []


async def test_without_the_bug_the_released_port_gets_a_fresh_mac_and_the_nic_is_reusable(database) -> None:
    bench = Bench(database)
    ports = await bench.network_with_ports(2)
    node = await bench.deployed_node(ports[:1])
    await bench.do(bench.baremetal.set_provision_state(ADMIN, node.uuid, "deleted"))

    assert (await bench.port(ports[0].id)).mac_address != nic_mac("n1", 0)
    await bench.do(bench.baremetal.vif_attach(ADMIN, node.uuid, ports[1].id))
    assert (await bench.port(ports[1].id)).mac_address == nic_mac("n1", 0)


async def test_a_bmc_that_errors_fails_the_deploy_with_its_words(database) -> None:
    bench = Bench(database)
    node = await bench.available_node()
    bench.hardware.fail(node.uuid, "deploy", message="BMC 10.0.0.9 timed out")

    await bench.do(bench.baremetal.set_provision_state(ADMIN, node.uuid, "active"))

    failed = await bench.node(node.uuid)
    assert failed.provision_state == DEPLOYFAIL
    assert failed.last_error == "Failed to deploy: BMC 10.0.0.9 timed out"
    assert failed.reservation is None
    # deploy failed has exits: deploy again (the BMC failed once) or tear down.
    await bench.do(bench.baremetal.set_provision_state(ADMIN, node.uuid, "active"))
    redeployed = await bench.node(node.uuid)
    assert (redeployed.provision_state, redeployed.last_error) == (ACTIVE, None)


async def test_an_injected_fault_before_active_fails_the_deploy(database) -> None:
    bench = Bench(database)
    node = await bench.available_node()
    bench.fault("baremetal.deploy.before_active=error*1")

    await bench.do(bench.baremetal.set_provision_state(ADMIN, node.uuid, "active"))

    failed = await bench.node(node.uuid)
    assert failed.provision_state == DEPLOYFAIL
    assert failed.last_error == "Failed to deploy: Injected fault at baremetal.deploy.before_active"
    assert bench.transitions(node.uuid)[-1] == "deploying -> deploy failed (fail)"


async def test_a_failed_clean_ends_in_clean_failed_after_the_vifs_are_gone(database) -> None:
    bench = Bench(database)
    ports = await bench.network_with_ports(1)
    node = await bench.deployed_node(ports)
    bench.hardware.fail(node.uuid, "clean")

    await bench.do(bench.baremetal.set_provision_state(ADMIN, node.uuid, "deleted"))

    failed = await bench.node(node.uuid)
    assert failed.provision_state == CLEANFAIL
    assert failed.last_error == f"Failed to clean node {node.uuid}: IPMI call failed: clean."
    assert await bench.do(bench.baremetal.vif_list(ADMIN, node.uuid)) == []
    # clean failed -> manage -> provide brings it back.
    await bench.do(bench.baremetal.set_provision_state(ADMIN, node.uuid, "manage"))
    await bench.do(bench.baremetal.set_provision_state(ADMIN, node.uuid, "provide"))
    assert (await bench.node(node.uuid)).provision_state == AVAILABLE


async def test_abort_in_wait_call_back_fails_the_deploy_and_ends_its_job(database) -> None:
    bench = Bench(database, deploy_seconds=300)
    node = await bench.available_node()
    bm = bench.baremetal

    async def operator() -> None:
        await bench.rt.sleep(10)
        await bm.set_provision_state(ADMIN, node.uuid, "abort")

    started = bench.rt.now()
    bench.spawn(bm.set_provision_state(ADMIN, node.uuid, "active"))
    bench.spawn(operator(), "operator")
    await bench.run()

    failed = await bench.node(node.uuid)
    assert failed.provision_state == DEPLOYFAIL
    assert failed.last_error == f"Deploy operation aborted for node {node.uuid}."
    assert bench.rt.now() == started + 10  # the deploy job did not wait for the call-back


async def test_rebuild_and_manual_clean_follow_the_table(database) -> None:
    bench = Bench(database)
    node = await bench.available_node()
    bm = bench.baremetal
    await bench.do(bm.set_provision_state(ADMIN, node.uuid, "active"))
    await bench.do(bm.set_provision_state(ADMIN, node.uuid, "rebuild"))
    assert bench.transitions(node.uuid)[-4:] == [
        "active -> deploying (rebuild)", "deploying -> wait call-back (wait)",
        "wait call-back -> deploying (resume)", "deploying -> active (done)",
    ]
    await bench.do(bm.set_provision_state(ADMIN, node.uuid, "undeploy"))
    await bench.do(bm.set_provision_state(ADMIN, node.uuid, "manage"))
    await bench.do(bm.set_provision_state(ADMIN, node.uuid, "clean"))
    assert bench.transitions(node.uuid)[-2:] == ["manageable -> cleaning (clean)", "cleaning -> manageable (manage)"]
    assert (await bench.node(node.uuid)).provision_state == MANAGEABLE


async def test_requests_the_table_refuses_change_nothing(database) -> None:
    bench = Bench(database)
    node = await bench.available_node()
    bm = bench.baremetal
    before = await bench.node(node.uuid)

    error = await bench.fails(bm.set_provision_state(ADMIN, node.uuid, "deleted"))
    assert isinstance(error, be.InvalidStateRequested)
    assert str(error) == (
        f'The requested action "deleted" can not be performed on node "{node.uuid}" '
        'while it is in state "available".'
    )
    assert error.status == 400
    error = await bench.fails(bm.set_provision_state(ADMIN, node.uuid, "explode"))
    assert isinstance(error, be.InvalidParameterValue)
    await bench.do(bm.set_maintenance(ADMIN, node.uuid, True, reason="disk"))
    error = await bench.fails(bm.set_provision_state(ADMIN, node.uuid, "active"))
    assert isinstance(error, be.NodeInMaintenance)
    after = await bench.node(node.uuid)
    assert (after.provision_state, after.provision_updated_at) == (AVAILABLE, before.provision_updated_at)
    assert bench.transitions(node.uuid)[-1] == "cleaning -> available (done)"


async def test_a_node_put_in_maintenance_while_waiting_stays_until_released(database) -> None:
    bench = Bench(database, deploy_seconds=60)
    node = await bench.available_node()
    bm = bench.baremetal

    async def operator() -> None:
        await bench.rt.sleep(10)
        await bm.set_maintenance(ADMIN, node.uuid, True, reason="switch work")
        await bench.rt.sleep(100)  # long past the ramdisk's call-back
        assert (await bm.find_node(node.uuid)).provision_state == DEPLOYWAIT
        await bm.set_maintenance(ADMIN, node.uuid, False)

    started = bench.rt.now()
    bench.spawn(bm.set_provision_state(ADMIN, node.uuid, "active"))
    bench.spawn(operator(), "operator")
    await bench.run()

    final = await bench.node(node.uuid)
    assert (final.provision_state, final.maintenance, final.maintenance_reason) == (ACTIVE, False, None)
    # Resumed from the hardware's truth the moment maintenance ended, not a new deploy.
    assert bench.transition_times(node.uuid)[-1] == started + 110


async def test_expire_transient_fails_a_node_stuck_past_its_deadline(database) -> None:
    bench = Bench(database, deploy_seconds=10)
    node = await bench.available_node()
    bm = bench.baremetal
    results: list[bool] = []

    async def reconciler() -> None:
        await bench.rt.sleep(1)
        await bm.set_maintenance(ADMIN, node.uuid, True)
        results.append(await bm.expire_transient(node.uuid))  # not yet past its deadline
        await bench.rt.sleep(CALLBACK_TIMEOUT + 1)
        results.append(await bm.expire_transient(node.uuid))

    bench.spawn(bm.set_provision_state(ADMIN, node.uuid, "active"))
    bench.spawn(reconciler(), "reconciler")
    await bench.run()

    assert results == [False, True]
    failed = await bench.node(node.uuid)
    assert failed.provision_state == DEPLOYFAIL
    assert failed.last_error == f"Timeout reached while waiting for callback for node {node.uuid}"


async def test_a_restarted_control_plane_resumes_the_deploy_from_the_hardware(database) -> None:
    bench = Bench(database, deploy_seconds=50)
    node = await bench.available_node()
    bench.fault("baremetal.deploy.wait_callback=crash*1")
    started = bench.rt.now()
    bench.spawn(bench.baremetal.set_provision_state(ADMIN, node.uuid, "active"))
    await bench.run()
    assert not bench.rt.alive
    assert bench.hardware.deploy_callback_at(node.uuid) == started + 50

    second = bench.restarted()
    await second.do(second.baremetal.resume_conductor_jobs())

    final = await second.node(node.uuid)
    assert final.provision_state == ACTIVE
    assert second.rt.now() == started + 50  # the ramdisk's own time, not a fresh deploy


async def test_a_restart_during_cleaning_clears_the_dead_reservation_and_finishes(database) -> None:
    bench = Bench(database, clean_seconds=20)
    ports = await bench.network_with_ports(1)
    node = await bench.deployed_node(ports)

    async def undeploy_then_crash() -> None:
        await bench.baremetal.set_provision_state(ADMIN, node.uuid, "deleted")

    bench.fault("baremetal.clean.wait=crash*1")
    started = bench.rt.now()
    bench.spawn(undeploy_then_crash())
    await bench.run()
    stuck = await Bench(database).node(node.uuid)
    assert (stuck.provision_state, stuck.reservation) == (CLEANING, HOST)

    second = bench.restarted()
    await second.do(second.baremetal.resume_conductor_jobs())

    final = await second.node(node.uuid)
    assert (final.provision_state, final.reservation) == (AVAILABLE, None)
    assert second.rt.now() == started + 20  # the clean the hardware had started, not a new one


async def test_a_restart_mends_a_vif_detach_cut_short(database) -> None:
    bench = Bench(database)
    ports = await bench.network_with_ports(1)
    node = await bench.deployed_node(ports)
    bench.fault("baremetal.vif_detach.before_unbind=crash*1")
    bench.spawn(bench.baremetal.vif_detach(ADMIN, node.uuid, ports[0].id))
    await bench.run()
    assert not bench.rt.alive
    half = await Bench(database).port(ports[0].id)
    assert (half.binding_host_id, half.mac_address) == (node.uuid, nic_mac("n1", 0))

    second = bench.restarted()
    await second.do(second.baremetal.resume_conductor_jobs())

    mended = await second.port(ports[0].id)
    assert mended.binding_host_id == ""
    assert mended.mac_address != nic_mac("n1", 0)
    assert await second.do(second.baremetal.vif_list(ADMIN, node.uuid)) == []


@pytest.mark.parametrize("target", ["power off", "power on", "rebooting"])
async def test_power_requests_reach_the_hardware(database, target: str) -> None:
    bench = Bench(database)
    node = await bench.available_node()
    updated = await bench.do(bench.baremetal.set_power_state(ADMIN, node.uuid, target))
    expected = POWER_OFF if target == "power off" else POWER_ON
    assert (updated.power_state, updated.target_power_state) == (expected, None)
    assert bench.hardware.power_state(node.uuid) == expected


async def test_a_failed_power_request_is_reported_in_last_error(database) -> None:
    bench = Bench(database)
    node = await bench.available_node()
    bench.hardware.fail(node.uuid, "power")
    updated = await bench.do(bench.baremetal.set_power_state(ADMIN, node.uuid, "power on"))
    assert updated.power_state == POWER_OFF
    assert updated.last_error == (
        "Failed to change power state to 'power on' by 'power on'. Error: IPMI call failed: power."
    )


async def test_every_use_of_the_job_registry_goes_through_the_dict_the_explorer_wraps(database) -> None:
    # The race explorer replaces ``jobs.tokens`` with a dict that records each access
    # (tether.sim.explore.schedule); a use that went around it would hide a race from it.
    bench = Bench(database, deploy_seconds=10)
    node = await bench.available_node()
    seen: list[tuple[str, object]] = []

    class Watched(dict):  # type: ignore[type-arg]
        def __contains__(self, key: object) -> bool:
            seen.append(("in", key))
            return super().__contains__(key)

        def get(self, key: str, default: object = None) -> object:
            seen.append(("get", key))
            return super().get(key, default)

        def __setitem__(self, key: str, value: object) -> None:
            seen.append(("set", key))
            super().__setitem__(key, value)

        def __delitem__(self, key: str) -> None:
            seen.append(("del", key))
            super().__delitem__(key)

    bench.baremetal.jobs.tokens = Watched()
    await bench.do(bench.baremetal.set_provision_state(ADMIN, node.uuid, "active"))
    assert (await bench.node(node.uuid)).provision_state == ACTIVE
    assert {("set", node.uuid), ("get", node.uuid), ("del", node.uuid)} <= set(seen)
    assert bench.baremetal.jobs.tokens == {}
