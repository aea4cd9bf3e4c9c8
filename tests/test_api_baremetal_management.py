"""Ironic's API past enrolment, on a live `tether serve`: drivers, hardware interfaces and node fields,
traits, boot device, console, validate, allocations, conductors, and VIFs named by their port's name.

Driven through the real `openstack baremetal` CLI, openstacksdk and, for bad input, plain HTTP. The
server is one whose reconcilers sleep (``start_without_reconcilers``): allocations and standalone VIF
attaches give nodes an instance_uuid that no compute instance has, which is a standalone ironic user's
business, not compute's.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import openstack.exceptions
import pytest

from tests.live import LiveCloud
from tests.test_api_baremetal import (
    Api,
    fault,
    json_documents,
    new_mac,
    openstack_batch,
    start_without_reconcilers,
    token,
    unique,
)

INTERFACES = ("bios", "boot", "console", "deploy", "firmware", "inspect", "management", "network", "power", "raid",
              "rescue", "storage", "vendor")


@pytest.fixture(scope="module")
def cloud(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveCloud]:
    live = start_without_reconcilers(tmp_path_factory.mktemp("management"))
    yield live
    live.stop()


@pytest.fixture(scope="module")
def api(cloud: LiveCloud) -> Api:
    return Api(cloud.base_url, token(cloud.base_url))


@pytest.fixture(scope="module")
def sdk(cloud: LiveCloud) -> Iterator[Any]:
    connection = cloud.connect("tether")
    yield connection
    connection.close()


def available_node(api: Api, **fields: Any) -> dict[str, Any]:
    return api.make_available(resource_class=fields.pop("resource_class", unique("rc")), **fields)


# -- drivers and conductors -------------------------------------------------------------------


def test_the_cli_lists_fake_hardware_with_its_interfaces_and_this_conductor(cloud: LiveCloud) -> None:
    result = openstack_batch(
        cloud,
        "baremetal driver list -f json",
        "baremetal driver show fake-hardware -f json",
        "baremetal driver property list fake-hardware -f json",
        "baremetal conductor list -f json",
        "baremetal driver show ipmi",
        errors=("Could not find the following driver(s) or hardware type(s): ipmi. (HTTP 404)",),
    )
    listed, shown, properties, conductors = json_documents(result.stdout)
    assert [driver["name"] for driver in listed] == ["fake-hardware"]
    assert shown["name"] == "fake-hardware" and shown["type"] == "dynamic" and shown["hosts"]
    assert shown["default_network_interface"] == "flat"
    assert shown["enabled_network_interfaces"] == "flat, neutron, noop"
    assert shown["default_deploy_interface"] == "fake" and "no-console" in shown["enabled_console_interfaces"]
    assert {"property": "B1", "description": "B1 description. Required."} in properties
    assert [(c["hostname"], c["alive"]) for c in conductors] == [(shown["hosts"], True)]


def test_driver_and_conductor_versions_and_errors(api: Api) -> None:
    assert api("GET", "/drivers/fake-hardware/raid/logical_disk_properties").json()["raid_level"].startswith("RAID")
    assert "default_boot_interface" not in api("GET", "/drivers/fake-hardware", version="1.29").json()
    assert "default_bios_interface" not in api("GET", "/drivers/fake-hardware", version="1.39").json()
    assert api("GET", "/drivers?type=classic").json() == {"drivers": []}
    assert api("GET", "/drivers?detail=true", version="1.29").status_code == 406
    assert api("GET", "/conductors", version="1.48").status_code == 404
    host = api("GET", "/conductors").json()["conductors"][0]["hostname"]
    detail = api("GET", f"/conductors/{host}").json()
    assert detail["drivers"] == ["fake-hardware"] and detail["alive"] is True
    missing = api("GET", "/conductors/elsewhere")
    assert missing.status_code == 404 and fault(missing) == "Conductor elsewhere could not be found."
    bad = api("GET", "/drivers?type=modern")
    assert bad.status_code == 400 and '"type" filter must be one of "classic" or "dynamic"' in fault(bad)


# -- hardware interfaces and node fields ---------------------------------------------------------


def test_interfaces_default_validate_change_and_reset(api: Api) -> None:
    node = api.enrol(network_interface="noop", description="rack 4", owner="team-a", lessee="team-b")
    uuid_ = node["uuid"]
    assert node["network_interface"] == "noop" and node["deploy_interface"] == "fake"
    assert all(node[f"{kind}_interface"] for kind in INTERFACES)
    assert (node["description"], node["owner"], node["lessee"]) == ("rack 4", "team-a", "team-b")

    changed = api("PATCH", f"/nodes/{uuid_}", json=[
        {"op": "replace", "path": "/console_interface", "value": "no-console"},
        {"op": "replace", "path": "/network_interface", "value": "neutron"},
        {"op": "add", "path": "/extra/rack", "value": 4}, {"op": "add", "path": "/properties/cpus", "value": 8},
        {"op": "add", "path": "/driver_info/ipmi_address", "value": "10.0.0.9"},
        {"op": "add", "path": "/instance_info/image_source", "value": "http://images/x.qcow2"}]).json()
    assert (changed["console_interface"], changed["network_interface"]) == ("no-console", "neutron")
    assert changed["extra"] == {"rack": 4} and changed["properties"] == {"cpus": 8}
    assert changed["driver_info"] == {"ipmi_address": "10.0.0.9"}
    assert changed["instance_info"] == {"image_source": "http://images/x.qcow2"}
    # a removed interface goes back to its default
    reset = api("PATCH", f"/nodes/{uuid_}", json=[{"op": "remove", "path": "/network_interface"}]).json()
    assert reset["network_interface"] == "flat" and reset["console_interface"] == "no-console"
    # reset_interfaces resets what a driver change leaves; fake-hardware to itself is no change (as ironic)
    again = api("PATCH", f"/nodes/{uuid_}?reset_interfaces=true",
                json=[{"op": "replace", "path": "/driver", "value": "fake-hardware"},
                      {"op": "replace", "path": "/rescue_interface", "value": "no-rescue"}])
    assert again.status_code == 200, again.text
    assert (again.json()["console_interface"], again.json()["rescue_interface"]) == ("no-console", "no-rescue")
    assert api("PATCH", f"/nodes/{uuid_}?reset_interfaces=true", version="1.44",
               json=[{"op": "replace", "path": "/driver", "value": "fake-hardware"}]).status_code == 406

    for patch, status, words in [
        ([{"op": "replace", "path": "/deploy_interface", "value": "direct"}], 400,
         "Could not find the following interface in the 'ironic.hardware.interfaces.deploy' entrypoint: direct. "
         "Valid interfaces are ['fake']."),
        ([{"op": "replace", "path": "/driver", "value": "ipmi"}], 400,
         "Could not find the following driver(s) or hardware type(s): ipmi."),
        ([{"op": "replace", "path": "/description", "value": "x" * 4097}], 400, "at most 4096 characters"),
        ([{"op": "replace", "path": "/protected", "value": True}], 409,
         "can only be made protected in provision states 'active' or 'rescue'"),
        ([{"op": "replace", "path": "/protected_reason", "value": "mine"}], 400,
         "The protected_reason field can only be set when protected is True"),
        ([{"op": "add", "path": "/traits", "value": ["CUSTOM_A"]}], 400, "'/traits' is an internal attribute"),
        ([{"op": "replace", "path": "/lessee", "value": 5}], 400, "Invalid input for field/attribute lessee"),
    ]:
        response = api("PATCH", f"/nodes/{uuid_}", json=patch)
        assert response.status_code == status, (patch, response.text)
        assert words in fault(response), (patch, fault(response))
    response = api("PATCH", f"/nodes/{uuid_}?reset_interfaces=true",
                   json=[{"op": "replace", "path": "/description", "value": "y"}])
    assert "The reset_interfaces parameter can only be used when changing the node's driver." in fault(response)
    assert api("PATCH", f"/nodes/{uuid_}", json=[{"op": "replace", "path": "/deploy_interface", "value": "fake"}],
               version="1.30").status_code == 406
    after = api.node(uuid_)
    assert (after["description"], after["deploy_interface"], after["protected"], after["traits"]) == \
           ("rack 4", "fake", False, [])
    assert api("DELETE", f"/nodes/{uuid_}").status_code == 204


def test_protected_and_retired_nodes(api: Api) -> None:
    node = available_node(api)
    uuid_ = node["uuid"]
    retire = api("PATCH", f"/nodes/{uuid_}", json=[{"op": "replace", "path": "/retired", "value": True}])
    assert retire.status_code == 409 and "can not have 'retired' set in provision state 'available'" in fault(retire)
    assert api.provision(uuid_, "active").status_code == 202
    api.wait_for(uuid_, "active")
    protect = api("PATCH", f"/nodes/{uuid_}", json=[{"op": "replace", "path": "/protected", "value": True},
                                                    {"op": "add", "path": "/protected_reason", "value": "prod"}])
    assert protect.status_code == 200 and protect.json()["protected_reason"] == "prod"
    for target in ("deleted", "rebuild"):
        refused = api.provision(uuid_, target)
        assert refused.status_code == 403
        assert fault(refused) == f"Node {uuid_} is protected and cannot be undeployed, rebuilt or deleted"
    assert api("PATCH", f"/nodes/{uuid_}", json=[{"op": "add", "path": "/maintenance", "value": True}]).status_code \
        == 200
    assert api("DELETE", f"/nodes/{uuid_}").status_code == 403  # even in maintenance
    assert api("PATCH", f"/nodes/{uuid_}", json=[{"op": "replace", "path": "/maintenance", "value": False}]) \
        .status_code == 200
    unprotect = api("PATCH", f"/nodes/{uuid_}", json=[{"op": "replace", "path": "/protected", "value": False}])
    assert unprotect.json()["protected_reason"] is None
    retired = api("PATCH", f"/nodes/{uuid_}", json=[{"op": "replace", "path": "/retired", "value": True},
                                                    {"op": "add", "path": "/retired_reason", "value": "eol"}])
    assert retired.status_code == 200 and retired.json()["retired_reason"] == "eol"
    assert api.provision(uuid_, "deleted").status_code == 202
    # ironic: a retired node's cleaning ends in manageable, never available
    assert api.wait_for(uuid_, "manageable")["retired"] is True
    provide = api.provision(uuid_, "provide")
    assert provide.status_code == 400
    assert fault(provide) == f"The providing operation can't be performed on node {uuid_} because it is retired."
    assert api("GET", "/nodes?retired=true&fields=uuid").json()["nodes"] == [
        {"uuid": uuid_, "links": api.node(uuid_)["links"]}]
    assert api("DELETE", f"/nodes/{uuid_}").status_code == 204


def test_lookups_by_instance_json_suffix_and_fault_filter(api: Api) -> None:
    node = api.enrol()
    instance = str(uuid.uuid4())
    assert api("PATCH", f"/nodes/{node['uuid']}",
               json=[{"op": "add", "path": "/instance_uuid", "value": instance}]).status_code == 200
    for path in (f"/nodes?instance_uuid={instance}", f"/nodes/detail?instance_uuid={instance}"):
        assert [n["uuid"] for n in api("GET", path).json()["nodes"]] == [node["uuid"]], path
    assert api("GET", f"/nodes/{node['uuid']}.json", version="1.90").json()["uuid"] == node["uuid"]
    assert api("GET", f"/nodes/{node['name']}.json", version="1.90").json()["uuid"] == node["uuid"]
    assert api("GET", f"/nodes/{node['uuid']}.json", version="1.91").status_code == 404
    patched = api("PATCH", f"/nodes/{node['uuid']}.json", version="1.90",
                  json=[{"op": "add", "path": "/extra/x", "value": 1}])
    assert patched.status_code == 200 and patched.json()["extra"] == {"x": 1}
    assert api("GET", "/nodes?fault=power%20failure").json()["nodes"] == []
    bad = api("GET", "/nodes?fault=meltdown")
    assert bad.status_code == 400
    assert fault(bad).startswith('Unrecognized fault "meltdown" is specified, allowed faults are (')
    assert api("GET", "/nodes?fault=power%20failure", version="1.41").status_code == 406
    assert api("DELETE", f"/nodes/{node['uuid']}.json", version="1.90").status_code == 409  # associated
    assert api("PATCH", f"/nodes/{node['uuid']}", json=[{"op": "remove", "path": "/instance_uuid"}]).status_code \
        == 200
    assert api("DELETE", f"/nodes/{node['uuid']}.json", version="1.90").status_code == 204


# -- traits -----------------------------------------------------------------------------------


def test_traits_with_ironics_limits(api: Api) -> None:
    node = api.enrol()
    path = f"/nodes/{node['uuid']}/traits"
    assert api("GET", path).json() == {"traits": []}
    assert api("PUT", path, json={"traits": ["CUSTOM_B", "HW_CPU_X86_VMX", "CUSTOM_B"]}).status_code == 204
    assert api("GET", path).json() == {"traits": ["CUSTOM_B", "HW_CPU_X86_VMX"]}
    added = api("PUT", f"{path}/CUSTOM_{'A' * 248}")
    assert added.status_code == 204 and added.headers["location"].endswith(f"{path}/CUSTOM_{'A' * 248}")
    assert api("PUT", f"{path}/CUSTOM_B").status_code == 204  # already there: no change
    assert api.node(node["uuid"])["traits"] == sorted(["CUSTOM_B", "HW_CPU_X86_VMX", f"CUSTOM_{'A' * 248}"])
    assert api("DELETE", f"{path}/CUSTOM_B").status_code == 204
    gone = api("DELETE", f"{path}/CUSTOM_B")
    assert gone.status_code == 404 and fault(gone) == f"Node {node['uuid']} doesn't have a trait 'CUSTOM_B'"
    # before 1.37 ironic routes these paths to the node: a field it lacks (406), a method (405), nothing (404)
    assert [api(method, url, version="1.36").status_code
            for method, url in (("GET", path), ("PUT", f"{path}/CUSTOM_B"), ("DELETE", f"{path}/CUSTOM_B"))] \
        == [406, 405, 404]
    before = api("GET", path).json()
    for method, url, kwargs, words in [
        ("PUT", f"{path}/CUSTOM_{'A' * 249}", {}, "Schema error for trait"),
        ("PUT", f"{path}/custom_lower", {}, "Schema error for trait"),
        ("PUT", f"{path}/NOT_A_STANDARD_TRAIT", {}, "is not valid under any of the given schemas"),
        ("PUT", path, {"json": {"traits": [f"CUSTOM_{i}" for i in range(51)]}},
         f"Could not modify traits for node {node['uuid']} as it would exceed the maximum number of traits per node "
         "(51 vs. 50)"),
        ("PUT", path, {"json": {"traits": "CUSTOM_A"}}, "Schema error for body"),
        ("PUT", path, {"json": {"names": ["CUSTOM_A"]}}, "Additional properties are not allowed"),
        ("PUT", path, {"json": {}}, "A single node trait may be added via PUT"),
        ("PUT", f"{path}/CUSTOM_C", {"json": {"traits": ["CUSTOM_D"]}}, "No body should be provided"),
    ]:
        response = api(method, url, **kwargs)
        assert response.status_code == 400, (url, kwargs, response.text)
        assert words in fault(response), (url, fault(response))
    assert api("PUT", path, json={"traits": [f"CUSTOM_{i}" for i in range(48)]}).status_code == 204
    assert api("PUT", f"{path}/CUSTOM_48").status_code == 204
    assert api("PUT", f"{path}/CUSTOM_49").status_code == 204
    too_many = api("PUT", f"{path}/CUSTOM_50")
    assert too_many.status_code == 400 and "(51 vs. 50)" in fault(too_many)
    assert len(api("GET", path).json()["traits"]) == 50 and before != api("GET", path).json()
    assert api("DELETE", path).status_code == 204 and api("GET", path).json() == {"traits": []}
    missing = api("GET", f"/nodes/{uuid.uuid4()}/traits")
    assert missing.status_code == 404
    assert api("DELETE", f"/nodes/{node['uuid']}").status_code == 204


# -- boot device, console, validate ----------------------------------------------------------------


def test_boot_device_console_and_validate_through_the_sdk(sdk: Any, api: Api) -> None:
    bm = sdk.baremetal
    node = bm.create_node(driver="fake-hardware", name=unique("mgmt"))
    assert bm.get_node_boot_device(node) == {"boot_device": "pxe", "persistent": False}
    assert bm.get_node_supported_boot_devices(node) == {"supported_boot_devices": ["pxe", "disk"]}
    bm.set_node_boot_device(node, "disk", persistent=True)
    assert bm.get_node_boot_device(node) == {"boot_device": "disk", "persistent": True}
    with pytest.raises(openstack.exceptions.BadRequestException, match=r"Invalid boot device floppy specified\."):
        bm.set_node_boot_device(node, "floppy")
    assert bm.get_node_boot_device(node)["boot_device"] == "disk"

    assert bm.get_node_console(node) == {"console_enabled": False, "console_info": None}
    bm.enable_node_console(node)
    console = bm.get_node_console(node)
    assert console["console_enabled"] is True and console["console_info"]["url"].startswith("fake://")
    assert bm.get_node(node).is_console_enabled is True
    bm.disable_node_console(node)
    assert bm.get_node_console(node)["console_enabled"] is False

    results = bm.validate_node(node, required=None)
    assert set(results) == set(INTERFACES) - {"vendor"} and all(r.result for r in results.values())
    bm.patch_node(node, [{"op": "replace", "path": "/console_interface", "value": "no-console"}])
    console_result = bm.validate_node(node, required=None)["console"]
    assert console_result.result is False
    assert console_result.reason == "Driver fake-hardware does not support console (disabled or not implemented)."
    refused = api("PUT", f"/nodes/{node.id}/states/console", json={"enabled": True})
    assert refused.status_code == 400 and "does not support console" in fault(refused)
    assert api("GET", f"/nodes/validate?node={node.name}").json()["console"]["result"] is False

    for method, path, body, words in [
        ("PUT", "management/boot_device", {}, "Missing mandatory parameter: boot_device"),
        ("PUT", "management/boot_device", {"boot_device": "pxe", "persistent": "often"}, "Invalid persistent"),
        ("PUT", "management/boot_device", {"boot_device": "pxe", "colour": 1}, "Unexpected arguments: colour"),
        ("PUT", "states/console", {"enabled": "perhaps"}, "Invalid enabled"),
        ("PUT", "states/console", {}, "Missing mandatory parameter: enabled"),
    ]:
        response = api(method, f"/nodes/{node.id}/{path}", json=body)
        assert response.status_code == 400, (path, body, response.text)
        assert words in fault(response), (path, fault(response))
    assert bm.get_node_boot_device(node) == {"boot_device": "disk", "persistent": True}
    bm.delete_node(node)


# -- allocations --------------------------------------------------------------------------------


def test_allocations_pick_a_matching_node_and_free_it_when_deleted(sdk: Any, api: Api) -> None:
    bm = sdk.baremetal
    rc = unique("rc")
    plain, gold = available_node(api, resource_class=rc), available_node(api, resource_class=rc)
    assert api("PUT", f"/nodes/{gold['uuid']}/traits", json={"traits": ["CUSTOM_GOLD"]}).status_code == 204

    allocation = bm.create_allocation(resource_class=rc, traits=["CUSTOM_GOLD"], name=unique("alloc"))
    allocation = bm.wait_for_allocation(allocation)
    assert (allocation.state, allocation.node_id) == ("active", gold["uuid"])
    held = api.node(gold["uuid"])
    assert (held["instance_uuid"], held["allocation_uuid"]) == (allocation.id, allocation.id)
    assert api("GET", f"/nodes/{gold['uuid']}/allocation").json()["uuid"] == allocation.id

    failed = bm.wait_for_allocation(bm.create_allocation(resource_class=rc, traits=["CUSTOM_GOLD"]),
                                    ignore_error=True)
    assert failed.state == "error" and failed.node_id is None
    assert failed.last_error == (f"Failed to process allocation {failed.id}: no suitable nodes have the requested "
                                 "traits CUSTOM_GOLD.")
    nothing = bm.wait_for_allocation(bm.create_allocation(resource_class=unique("none")), ignore_error=True)
    assert "no available nodes match the resource class" in nothing.last_error

    candidate = bm.wait_for_allocation(bm.create_allocation(resource_class=rc, candidate_nodes=[plain["name"]]))
    assert candidate.node_id == plain["uuid"] and candidate.candidate_nodes == [plain["uuid"]]
    listed = {a["uuid"]: a["state"] for a in api("GET", f"/allocations?resource_class={rc}").json()["allocations"]}
    assert listed == {allocation.id: "active", failed.id: "error", candidate.id: "active"}
    assert [a["uuid"] for a in api("GET", f"/allocations?node={plain['name']}").json()["allocations"]] == \
           [candidate.id]

    renamed = api("PATCH", f"/allocations/{allocation.id}", json=[{"op": "replace", "path": "/name", "value": "mine"},
                                                                  {"op": "add", "path": "/extra/k", "value": "v"}])
    assert renamed.status_code == 200 and (renamed.json()["name"], renamed.json()["extra"]) == ("mine", {"k": "v"})
    assert api("GET", "/allocations/mine").json()["uuid"] == allocation.id

    bm.delete_allocation("mine")
    freed = api.node(gold["uuid"])
    assert (freed["instance_uuid"], freed["allocation_uuid"], freed["provision_state"]) == (None, None, "available")
    assert api("GET", f"/nodes/{gold['uuid']}/allocation").status_code == 404
    # the node's tear-down ends the allocation that put an instance on it
    assert api.provision(plain["uuid"], "active").status_code == 202
    api.wait_for(plain["uuid"], "active")
    active = api("DELETE", f"/allocations/{candidate.id}")
    assert active.status_code == 409 and "because the node is active" in fault(active)
    assert api.provision(plain["uuid"], "deleted").status_code == 202
    assert api.wait_for(plain["uuid"], "available")["allocation_uuid"] is None
    assert api("GET", f"/allocations/{candidate.id}").status_code == 404
    for node in (plain, gold):
        assert api("DELETE", f"/nodes/{node['uuid']}").status_code == 204
    assert api("GET", f"/allocations/{failed.id}").json()["state"] == "error"


def test_allocation_bad_input_is_refused_and_creates_nothing(api: Api) -> None:
    before = api("GET", "/allocations").json()["allocations"]
    for body, status, words in [
        ({}, 400, "The resource_class field is mandatory when not backfilling"),
        ({"resource_class": "x" * 81}, 400, "is too long"),
        ({"resource_class": "rc", "traits": ["lowercase"]}, 400, "Schema error for allocation"),
        ({"resource_class": "rc", "candidate_nodes": [str(uuid.uuid4())]}, 400, "could not be found"),
        ({"resource_class": "rc", "colour": "red"}, 400, "Additional properties are not allowed"),
        ({"resource_class": "rc", "name": "bad name"}, 400, "Cannot create allocation with invalid name 'bad name'"),
        ({"resource_class": "rc", "uuid": "nope"}, 400, "Expected UUID for uuid: nope"),
        ({"resource_class": "rc", "node": "node-1"}, 400,
         'Cannot backfill an allocation for node'),
        ({"node": str(uuid.uuid4())}, 400, "could not be found"),
    ]:
        response = api("POST", "/allocations", json=body)
        assert response.status_code == status, (body, response.text)
        assert words in fault(response), (body, fault(response))
    assert api("POST", "/allocations", json={"resource_class": "rc"}, version="1.51").status_code == 405
    assert api("GET", "/allocations", version="1.51").status_code == 404
    assert api("GET", "/allocations?state=sleepy").status_code == 400
    assert api("GET", f"/allocations/{uuid.uuid4()}").status_code == 404
    assert api("GET", "/allocations").json()["allocations"] == before


def test_an_allocation_is_backfilled_for_a_node_deployed_without_one(sdk: Any, api: Api) -> None:
    node = available_node(api)
    instance = str(uuid.uuid4())
    assert api("PATCH", f"/nodes/{node['uuid']}",
               json=[{"op": "add", "path": "/instance_uuid", "value": instance}]).status_code == 200
    early = api("POST", "/allocations", json={"node": node["name"]})
    assert early.status_code == 400 and 'Node must be in the "active" state' in fault(early)
    assert api("GET", f"/allocations/{instance}").status_code == 404
    assert api.provision(node["uuid"], "active").status_code == 202
    api.wait_for(node["uuid"], "active")
    old = api("POST", "/allocations", json={"node": node["name"]}, version="1.57")
    assert old.status_code == 400 and "Cannot set node when creating an allocation in this API version" in fault(old)
    created = api("POST", "/allocations", json={"node": node["name"], "traits": []})
    assert created.status_code == 201, created.text
    # as ironic: named after the node's instance, of the node's resource class, active at once
    allocation = api("GET", f"/allocations/{instance}").json()
    assert (allocation["state"], allocation["node_uuid"], allocation["resource_class"]) == \
           ("active", node["uuid"], node["resource_class"])
    assert api.node(node["uuid"])["allocation_uuid"] == instance
    assert api.provision(node["uuid"], "deleted").status_code == 202
    assert api.wait_for(node["uuid"], "available")["instance_uuid"] is None
    assert api("GET", f"/allocations/{instance}").status_code == 404
    assert api("DELETE", f"/nodes/{node['uuid']}").status_code == 204


# -- the openstack CLI ---------------------------------------------------------------------------------


def test_the_cli_drives_traits_boot_device_console_validate_and_allocations(cloud: LiveCloud, api: Api) -> None:
    name, rc = unique("cli"), unique("rc")
    node = available_node(api, name=name, resource_class=rc)
    result = openstack_batch(
        cloud,
        f"baremetal node set {name} --description racked --network-interface noop --owner team-a",
        f"baremetal node add trait {name} CUSTOM_FAST HW_CPU_X86_VMX",
        f"baremetal node trait list {name} -f json",
        f"baremetal node remove trait {name} HW_CPU_X86_VMX",
        f"baremetal node boot device set {name} disk --persistent",
        f"baremetal node boot device show {name} -f json",
        f"baremetal node boot device show {name} --supported -f json",
        f"baremetal node console enable {name}",
        f"baremetal node console show {name} -f json",
        f"baremetal node console disable {name}",
        f"baremetal node validate {name} -f json",
        f"baremetal allocation create --resource-class {rc} --trait CUSTOM_FAST --name {name} --wait 30 -f json",
        f"baremetal node show {name} -f json -c description -c network_interface -c owner -c traits "
        "-c instance_uuid -c allocation_uuid",
        f"baremetal allocation delete {name}",
        f"baremetal node add trait {name} lowercase",
        errors=("Schema error for trait",),
    )
    traits, boot, supported, console, validation, allocation, shown = json_documents(result.stdout)
    assert sorted(t["traits"] for t in traits) == ["CUSTOM_FAST", "HW_CPU_X86_VMX"]
    assert boot == {"boot_device": "disk", "persistent": True}
    assert supported == {"supported_boot_devices": "pxe, disk"}
    assert console["console_enabled"] is True and console["console_info"]["type"] == "fake"
    assert {row["Interface"]: row["Result"] for row in validation}["power"] is True
    assert (allocation["state"], allocation["node_uuid"], allocation["traits"]) == \
           ("active", node["uuid"], ["CUSTOM_FAST"])
    assert shown == {"description": "racked", "network_interface": "noop", "owner": "team-a", "traits": ["CUSTOM_FAST"],
                     "instance_uuid": allocation["uuid"], "allocation_uuid": allocation["uuid"]}
    after = api.node(node["uuid"])
    assert (after["instance_uuid"], after["console_enabled"], after["traits"]) == (None, False, ["CUSTOM_FAST"])
    assert api("DELETE", f"/nodes/{node['uuid']}").status_code == 204


def test_the_cli_attaches_a_vif_by_port_name_and_detach_clears_the_port(cloud: LiveCloud, sdk: Any, api: Api) -> None:
    name, port_name = unique("vif"), unique("port")
    node = api.enrol(name=name)
    address = new_mac()
    assert api("POST", "/ports", json={"address": address, "node_uuid": node["uuid"],
                                       "physical_network": "physnet1"}).status_code == 201
    network = sdk.network.find_network("private", ignore_missing=False)
    port = sdk.network.create_port(network_id=network.id, name=port_name)
    try:
        result = openstack_batch(
            cloud,
            f"baremetal node vif attach {name} {port_name}",
            f"baremetal node vif list {name} -f json",
            f"port show {port_name} -f json -c device_id -c device_owner -c binding_host_id -c mac_address",
            f"baremetal node vif detach {name} {port_name}",
            f"baremetal node vif list {name} -f json",
            f"port show {port_name} -f json -c device_id -c device_owner -c binding_host_id -c mac_address",
            f"baremetal node vif attach {name} {unique('nosuchport')}",
            errors=("was not found",),
        )
        attached, bound, detached, released = json_documents(result.stdout)
        assert attached == [{"id": port.id}]
        assert (bound["device_id"], bound["device_owner"], bound["binding_host_id"], bound["mac_address"]) == \
               (node["uuid"], "baremetal:none", node["uuid"], address)
        assert detached == []
        # as ironic's neutron interface leaves it: unbound, no device, and not the NIC's MAC
        assert (released["device_id"], released["device_owner"], released["binding_host_id"]) == ("", "", "")
        assert released["mac_address"] != address
    finally:
        sdk.network.delete_port(port, ignore_missing=True)
    assert api("DELETE", f"/nodes/{node['uuid']}").status_code == 204
