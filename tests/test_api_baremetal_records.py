"""Ironic's API beyond nodes and NICs, on a live `tether serve`: volume connectors and targets, deploy
templates, runbooks (and cleaning with one), a node's target RAID configuration, shards, inspection,
BIOS settings, firmware components, virtual media, the ramdisk's heartbeat, and chassis updates.

Driven through openstacksdk's baremetal proxy where it has the call, else plain HTTP with
X-OpenStack-Ironic-API-Version; errors are read from ironic's envelope.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import openstack.exceptions
import pytest

from tests.live import LiveCloud
from tests.test_api_baremetal import Api, fault, new_mac, start_without_reconcilers, token, unique


@pytest.fixture(scope="module")
def cloud(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveCloud]:
    live = start_without_reconcilers(tmp_path_factory.mktemp("records"))
    yield live
    live.stop()


@pytest.fixture(scope="module")
def api(cloud: LiveCloud) -> Api:
    return Api(cloud.base_url, token(cloud.base_url))


@pytest.fixture(scope="module")
def sdk(cloud: LiveCloud) -> Iterator[Any]:
    connection = cloud.connect("tether")
    connection.baremetal.default_microversion = "1.92"
    yield connection
    connection.close()


def power(api: Api, node: str, target: str) -> None:
    """Ask for a power state and wait until the node is in it."""
    assert api("PUT", f"/nodes/{node}/states/power", json={"target": target}).status_code == 202
    deadline = time.monotonic() + 30
    while api.node(node)["power_state"] != target:
        assert time.monotonic() < deadline, f"node {node} never reached {target}"
        time.sleep(0.05)


def trait() -> str:
    return unique("CUSTOM").upper().replace("-", "_")


# -- volume connectors and targets --------------------------------------------------------------------


def test_volume_connectors_and_targets_keep_ironics_rules(api: Api, sdk: Any) -> None:
    node = api.enrol()["uuid"]
    connector = sdk.baremetal.create_volume_connector(node_uuid=node, type="iqn", connector_id=unique("iqn"),
                                                      extra={"a": "1", "b": "2"})
    assert sdk.baremetal.get_volume_connector(connector.id).connector_id == connector.connector_id
    with pytest.raises(openstack.exceptions.ConflictException, match="A volume connector with type iqn"):
        sdk.baremetal.create_volume_connector(node_uuid=node, type="iqn", connector_id=connector.connector_id)
    target = sdk.baremetal.create_volume_target(node_uuid=node, volume_type="iscsi", volume_id=unique("vol"),
                                                boot_index=0)
    again = api("POST", "/volume/targets", version="1.32",
                json={"node_uuid": node, "volume_type": "iscsi", "volume_id": "other", "boot_index": 0})
    assert again.status_code == 409 and "boot index '0'" in fault(again)

    # listed alone, under their node, in short form and detailed; not before 1.32
    listed = api("GET", "/volume/connectors", version="1.32").json()["connectors"]
    assert {"uuid": connector.id, "node_uuid": node, "type": "iqn",
            "connector_id": connector.connector_id} in [{k: c[k] for k in c if k != "links"} for c in listed]
    assert [t["uuid"] for t in api("GET", f"/nodes/{node}/volume/targets", version="1.32").json()["targets"]] \
        == [target.id]
    assert api("GET", "/volume/targets?detail=true", version="1.43").json()["targets"][0]["properties"] == {}
    assert api("GET", f"/nodes/{node}/volume", version="1.32").json()["connectors"][0]["href"].endswith(
        f"/nodes/{node}/volume/connectors")
    assert api("GET", "/volume/connectors", version="1.31").status_code == 404
    malformed = api("GET", "/volume/connectors/not-a-uuid", version="1.32")
    assert malformed.status_code == 400 and fault(malformed) == "Expected a UUID but received not-a-uuid."

    # a powered-on node's volume records are left alone; powered off, they change
    power(api, node, "power on")
    refused = api("PATCH", f"/volume/connectors/{connector.id}", version="1.32",
                  json=[{"op": "replace", "path": "/connector_id", "value": "new"}])
    assert refused.status_code == 400
    assert fault(refused) == (f'The requested action "volume connector update" can not be performed on node '
                              f'"{node}" while it is in state "power on".')
    power(api, node, "power off")
    patched = sdk.baremetal.patch_volume_connector(connector.id, [{"op": "remove", "path": "/extra/b"}])
    assert patched.extra == {"a": "1"}
    sdk.baremetal.delete_volume_target(target.id)
    # an enrolled node's records go whatever its power; its deletion takes the rest
    assert api("DELETE", f"/nodes/{node}").status_code == 204
    assert api("GET", f"/volume/connectors/{connector.id}", version="1.32").status_code == 404


# -- deploy templates and runbooks ---------------------------------------------------------------------


def test_deploy_templates_are_validated_patched_and_gated(api: Api, sdk: Any) -> None:
    steps = [{"interface": "bios", "step": "apply_configuration", "args": {}, "priority": 10}]
    name = trait()
    template = sdk.baremetal.create_deploy_template(name=name, steps=steps)
    assert sdk.baremetal.get_deploy_template(name).id == template.id
    duplicate = api("POST", "/deploy_templates", version="1.55", json={"name": name, "steps": steps})
    assert duplicate.status_code == 409 and fault(duplicate) == f"A deploy template with name {name} already exists."
    for body in ({"name": "not-a-trait", "steps": steps}, {"name": trait(), "steps": []},
                 {"name": trait(), "steps": [{"interface": "bios"}]}, {"name": trait(), "steps": steps, "uuid": "x"},
                 {"name": trait(), "steps": steps * 2}):
        assert api("POST", "/deploy_templates", version="1.55", json=body).status_code == 400, body
    assert api("POST", "/deploy_templates", version="1.54", json={"name": trait(), "steps": steps}).status_code \
        == 405
    assert api("GET", "/deploy_templates", version="1.54").status_code == 404

    added = {"interface": "raid", "step": "create_configuration", "args": {}, "priority": "20"}
    patched = api("PATCH", f"/deploy_templates/{template.id}", version="1.55",
                  json=[{"op": "add", "path": "/steps/1", "value": added},
                        {"op": "add", "path": "/extra/why", "value": "raid"}])
    assert patched.status_code == 200, patched.text
    assert patched.json()["steps"] == [*steps, {**added, "priority": 20}] and patched.json()["extra"] == {"why": "raid"}
    for patch in ([{"op": "remove", "path": "/name"}], [{"op": "replace", "path": "/name", "value": ""}],
                  [{"op": "replace", "path": "/steps", "value": []}]):
        assert api("PATCH", f"/deploy_templates/{template.id}", version="1.55", json=patch).status_code == 400
    assert api("GET", f"/deploy_templates/{template.id}.json", version="1.90").status_code == 200
    assert api("GET", f"/deploy_templates/{template.id}.json", version="1.91").status_code == 404
    assert [t["name"] for t in api("GET", "/deploy_templates", version="1.55").json()["deploy_templates"]] == [name]
    sdk.baremetal.delete_deploy_template(template.id)
    assert api("GET", f"/deploy_templates/{name}", version="1.55").status_code == 404


def test_a_runbook_cleans_a_node_that_has_its_trait(api: Api, sdk: Any) -> None:
    steps = [{"interface": "bios", "step": "apply_configuration", "args": {}, "order": 1}]
    name = trait()
    runbook = api("POST", "/runbooks", version="1.92", json={"name": name, "steps": steps}).json()
    assert (runbook["owner"], runbook["public"], runbook["disable_ramdisk"]) == (None, False, False)
    assert api("POST", "/runbooks", version="1.91", json={"name": trait(), "steps": steps}).status_code == 405
    assert api("POST", "/runbooks", version="1.92",
               json={"name": trait(), "steps": [{"invalid_key": "value"}]}).status_code == 400
    node = api.make_available()["uuid"]
    assert api.provision(node, "manage").status_code == 202
    api.wait_for(node, "manageable")
    refused = api("PUT", f"/nodes/{node}/states/provision", version="1.92", json={"target": "clean", "runbook": name})
    assert refused.status_code == 400 and "has not been approved for use on this node" in fault(refused)
    assert api("PUT", f"/nodes/{node}/traits/{name}", version="1.92").status_code == 204
    both = api("PUT", f"/nodes/{node}/states/provision", version="1.92",
               json={"target": "clean", "runbook": runbook["uuid"], "clean_steps": steps})
    assert both.status_code == 400 and fault(both) == 'Please provide either "clean_steps" or a runbook, but not both.'
    old = api("PUT", f"/nodes/{node}/states/provision", version="1.91", json={"target": "clean", "runbook": name})
    assert old.status_code == 406
    cleaned = api("PUT", f"/nodes/{node}/states/provision", version="1.92", json={"target": "clean", "runbook": name})
    assert cleaned.status_code == 202, cleaned.text
    api.wait_for(node, "manageable")
    assert [r.name for r in sdk.baremetal.runbooks()] == [name]
    assert api("DELETE", f"/runbooks/{name}", version="1.92").status_code == 204


# -- RAID, shards, inspection ----------------------------------------------------------------------


def test_a_target_raid_config_is_validated_kept_and_cleared(api: Api) -> None:
    node = api.enrol()["uuid"]
    config = {"logical_disks": [{"size_gb": 100, "raid_level": "1", "is_root_volume": True}]}
    assert api("PUT", f"/nodes/{node}/states/raid", version="1.11", json=config).status_code == 406
    assert api("PUT", f"/nodes/{node}/states/raid", version="1.12", json=config).status_code == 204
    assert api.node(node, version="1.12")["target_raid_config"] == config
    assert api("GET", f"/nodes/{node}/states", version="1.12").json()["target_raid_config"] == config
    bad = api("PUT", f"/nodes/{node}/states/raid", version="1.12",
              json={"logical_disks": [{"size_gb": 1, "raid_level": "7"}]})
    assert bad.status_code == 400 and fault(bad).startswith("RAID config validation error: '7' is not one of")
    two_roots = {"logical_disks": [{"size_gb": 1, "raid_level": "0", "is_root_volume": True}] * 2}
    refused = api("PUT", f"/nodes/{node}/states/raid", version="1.12", json=two_roots)
    assert refused.status_code == 400 and "more than one root volume" in fault(refused)
    assert api.node(node, version="1.12")["target_raid_config"] == config
    assert api("PUT", f"/nodes/{node}/states/raid", version="1.12", json={}).status_code == 204
    assert api.node(node, version="1.12")["target_raid_config"] == {}


def test_shards_label_filter_and_count_nodes(api: Api) -> None:
    shard = unique("shard")
    first = api("POST", "/nodes", version="1.82", json={"driver": "fake-hardware", "shard": shard}).json()
    second = api.enrol()
    patched = api("PATCH", f"/nodes/{second['uuid']}", version="1.82",
                  json=[{"op": "add", "path": "/shard", "value": f"{shard}-2"}])
    assert patched.status_code == 200 and patched.json()["shard"] == f"{shard}-2"
    assert api("POST", "/nodes", version="1.81", json={"driver": "fake-hardware", "shard": shard}).status_code == 406
    both = api("GET", f"/nodes?shard={shard},{shard}-2", version="1.82").json()["nodes"]
    assert sorted(n["uuid"] for n in both) == sorted([first["uuid"], second["uuid"]])
    unsharded = [n["uuid"] for n in api("GET", "/nodes?sharded=false", version="1.82").json()["nodes"]]
    assert first["uuid"] not in unsharded and unsharded
    assert api("GET", f"/nodes?shard={shard}", version="1.81").status_code == 406
    shards = {s["name"]: s["count"] for s in api("GET", "/shards", version="1.82").json()["shards"]}
    assert shards[shard] == 1 and shards[f"{shard}-2"] == 1 and shards["None"] >= 1
    assert api("GET", "/shards", version="1.81").status_code == 404
    port = api("POST", "/ports", json={"node_uuid": first["uuid"], "address": new_mac()}).json()
    assert [p["uuid"] for p in api("GET", f"/ports?shard={shard}", version="1.82").json()["ports"]] == [port["uuid"]]
    assert api("GET", f"/ports?shard={shard}-2", version="1.82").json()["ports"] == []


def test_inspection_returns_the_node_to_manageable(api: Api) -> None:
    node = api.make_available()["uuid"]
    early = api("PUT", f"/nodes/{node}/states/provision", version="1.5", json={"target": "inspect"})
    assert early.status_code == 406
    assert api.provision(node, "inspect").status_code == 400  # from available, as ironic refuses it
    assert api.provision(node, "manage").status_code == 202
    assert api.provision(node, "inspect").status_code == 202
    api.wait_for(node, "manageable")
    assert api.node(node)["last_error"] is None
    assert api("PATCH", f"/nodes/{node}", json=[{"op": "replace", "path": "/inspect_interface",
                                                 "value": "no-inspect"}]).status_code == 200
    refused = api.provision(node, "inspect")
    assert refused.status_code == 400 and "does not support inspect" in fault(refused)


# -- what fake-hardware has none of ----------------------------------------------------------------


def test_bios_firmware_virtual_media_and_heartbeat_answer_as_for_fake_hardware(api: Api) -> None:
    node = api.enrol()["uuid"]
    assert api("GET", f"/nodes/{node}/bios", version="1.40").json() == {"bios": []}
    assert api("GET", f"/nodes/{node}/bios", version="1.39").status_code == 404
    missing = api("GET", f"/nodes/{node}/bios/ProcVirtualization", version="1.40")
    assert missing.status_code == 404 and fault(missing) == \
        f"Node {node} doesn't have a BIOS setting 'ProcVirtualization'"
    assert api("GET", f"/nodes/{node}/firmware", version="1.86").json() == {"firmware": []}
    assert api("GET", f"/nodes/{node}/firmware", version="1.85").status_code == 404

    attach = api("POST", f"/nodes/{node}/vmedia", version="1.89", json={"device_type": "cdrom",
                                                                        "image_url": "http://image"})
    assert attach.status_code == 400
    assert fault(attach) == "Driver fake-hardware does not support attach_virtual_media (disabled or not implemented)."
    scheme = api("POST", f"/nodes/{node}/vmedia", version="1.89", json={"device_type": "cdrom", "image_url": "ftp://x"})
    assert scheme.status_code == 400 and fault(scheme) == "Unsupported or missing URL scheme: ftp"
    assert api("DELETE", f"/nodes/{node}/vmedia", version="1.89").status_code == 400
    assert api("DELETE", f"/nodes/{node}/vmedia", version="1.88").status_code == 404

    beat = {"callback_url": "http://192.0.2.1:9999", "agent_token": "whatever"}
    assert api("POST", f"/heartbeat/{node}", version="1.21", json=beat).status_code == 404
    refused = api("POST", f"/heartbeat/{node}", version="1.36", json=beat)
    assert refused.status_code == 400 and fault(refused) == "Invalid or missing agent token received."
    tokenless = api("POST", f"/heartbeat/{node}", version="1.36", json={"callback_url": "http://192.0.2.1:9999"})
    assert fault(tokenless) == "Agent token is required for heartbeat processing."
    by_body = api("POST", "/heartbeat", version="1.22", json={"node_ident": node, **beat})
    assert by_body.status_code == 400 and fault(by_body) == "Invalid or missing agent token received."
    too_new = api("POST", "/heartbeat", version="1.22", json={"node_ident": node, "agent_version": "10", **beat})
    assert fault(too_new) == 'Field "agent_version" not recognised'
    empty_vif = api("DELETE", f"/nodes/{node}/vifs/", version="1.28")
    assert empty_vif.status_code == 400 and fault(empty_vif) == "Expected UUID or name for vif_id: "
    no_vif = api("DELETE", f"/nodes/{node}/vifs", version="1.28")
    assert no_vif.status_code == 400 and fault(no_vif) == "Missing mandatory parameter: vif_id"


def test_inspection_rules_are_validated_hidden_when_sensitive_and_patched(api: Api) -> None:
    log = {"op": "log", "args": {"msg": "Node {node.uuid} is being inspected"}}
    looped = {"op": "eq", "args": ["{inventory.system.product_name}", "{item}"], "loop": ["a", "b"],
              "multiple": "any"}
    made = api("POST", "/inspection_rules", version="1.96",
               json={"description": "d", "conditions": [looped], "actions": [log], "phase": "main", "priority": 5})
    assert made.status_code == 201, made.text
    rule = made.json()
    assert (rule["conditions"], rule["actions"], rule["sensitive"]) == ([looped], [log], False)
    assert api("POST", "/inspection_rules", version="1.95", json={"actions": [log]}).status_code == 405
    assert api("GET", "/inspection_rules", version="1.95").status_code == 404
    for body in ({"actions": [log], "priority": -1}, {"actions": [log], "priority": 10000},
                 {"actions": [log], "priority": 5000.5}, {"actions": []},
                 {"actions": [{"op": "set-attribute", "args": ["/extra/a"]}]},
                 {"actions": [{"op": "log", "args": {"message": "x"}}]},
                 {"actions": [log], "conditions": [{"op": "!!eq", "args": []}]},
                 {"actions": [log], "phase": "late"}):
        refused = api("POST", "/inspection_rules", version="1.96", json=body)
        assert refused.status_code == 400, (body, refused.text)
    assert "missing required argument(s): msg" in fault(
        api("POST", "/inspection_rules", version="1.96", json={"actions": [{"op": "log", "args": {}}]}))

    secret = api("POST", "/inspection_rules", version="1.96", json={"actions": [log], "sensitive": True}).json()
    shown = api("GET", f"/inspection_rules/{secret['uuid']}", version="1.96").json()
    assert (shown["sensitive"], shown["conditions"], shown["actions"]) == (True, None, None)
    unset = api("PATCH", f"/inspection_rules/{secret['uuid']}", version="1.96",
                json=[{"op": "replace", "path": "/sensitive", "value": False}])
    assert unset.status_code == 400 and "cannot have the sensitive flag unset" in fault(unset)

    new_actions = [{"op": "set-attribute", "args": ["/properties/cpu_model", "cpu_xyz"]}]
    patched = api("PATCH", f"/inspection_rules/{rule['uuid']}", version="1.96",
                  json=[{"op": "replace", "path": "/priority", "value": 200},
                        {"op": "replace", "path": "/actions", "value": new_actions}])
    assert patched.status_code == 200, patched.text
    assert (patched.json()["priority"], patched.json()["actions"]) == (200, new_actions)
    listed = api("GET", "/inspection_rules", version="1.96").json()["inspection_rules"]
    assert {"uuid", "priority", "phase", "description", "links"} == set(listed[0])
    assert api("DELETE", f"/inspection_rules/{rule['uuid']}", version="1.96").status_code == 204
    gone = api("DELETE", f"/inspection_rules/{rule['uuid']}", version="1.96")
    assert gone.status_code == 404 and fault(gone) == f"Rule {rule['uuid']} could not be found."


def test_a_nodes_history_keeps_each_error_it_met(tmp_path_factory: pytest.TempPathFactory) -> None:
    faulty = start_without_reconcilers(tmp_path_factory.mktemp("history"),
                                       faults=("baremetal.deploy.before_active=error*1",))
    try:
        api = Api(faulty.base_url, token(faulty.base_url))
        node = api.make_available()["uuid"]
        assert api("GET", f"/nodes/{node}/history", version="1.78").json() == {"history": []}
        assert api.provision(node, "active").status_code == 202
        failed = api.wait_for(node, "deploy failed")
        [event] = api("GET", f"/nodes/{node}/history", version="1.78").json()["history"]
        assert (event["severity"], event["event"]) == ("ERROR", failed["last_error"])
        assert set(event) == {"uuid", "created_at", "severity", "event", "links"}
        shown = api("GET", f"/nodes/{node}/history/{event['uuid']}", version="1.78").json()
        assert (shown["event_type"], shown["conductor"]) == ("deploying", api("GET", "/conductors", version="1.49")
                                                             .json()["conductors"][0]["hostname"])
        detailed = api("GET", f"/nodes/{node}/history?detail=true", version="1.78").json()["history"]
        assert detailed[0]["event_type"] == "deploying"
        assert api("GET", f"/nodes/{node}/history", version="1.77").status_code == 404
        # the deploy succeeds the second time; the error stays in the history
        assert api.provision(node, "active").status_code == 202
        api.wait_for(node, "active")
        assert len(api("GET", f"/nodes/{node}/history", version="1.78").json()["history"]) == 1
    finally:
        faulty.stop()
