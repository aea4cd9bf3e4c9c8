"""Schemathesis against the live server's own /openapi.json: no request makes a service answer 5xx.

Every operation the document describes gets generated requests, valid and
invalid (positive and negative generation), first with generated path
parameters and then, for everything but DELETE, with the ids of real
resources, so that bodies reach the validation behind the lookup. Each
answer must be below 500, and each 4xx must be in the envelope of the
service its path belongs to (nova's fault, NeutronError, ironic's
error_message, glance's and keystone's). The run has its own server:
generated requests create, change and delete things.
"""

from __future__ import annotations

import json
import time
import traceback
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error

from tests.live import LiveCloud, start

# Cases per operation, per generation mode and per pass; ~100 operations, two modes and two passes.
MAX_EXAMPLES = 10
PATCH_MEDIA_TYPES = ("application/openstack-images-v2.0-json-patch", "application/openstack-images-v2.1-json-patch")
NOVA_FAULTS = {"badRequest", "unauthorized", "forbidden", "itemNotFound", "badMethod", "notAcceptable",
               "conflictingRequest", "overLimit", "badMediaType", "unprocessableEntity"}


# glance's JSON-patch media types are JSON on the wire; schemathesis only recognises */json and */*+json.
schemathesis.serializer.alias(list(PATCH_MEDIA_TYPES), "application/json")


@pytest.fixture(scope="module")
def fuzzed_cloud(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveCloud]:
    cloud = start(tmp_path_factory.mktemp("schemathesis"), deploy_seconds=0.2, clean_seconds=0.1)
    yield cloud
    cloud.stop()


def admin_token(base_url: str) -> str:
    body = {"auth": {"identity": {"methods": ["password"], "password": {
        "user": {"name": "admin", "domain": {"name": "Default"}, "password": "admin"}}},
        "scope": {"project": {"name": "admin", "domain": {"name": "Default"}}}}}
    response = httpx.post(f"{base_url}/identity/v3/auth/tokens", json=body, timeout=30)
    assert response.status_code == 201, response.text
    return response.headers["X-Subject-Token"]


# -- what a 4xx must look like -----------------------------------------------------------------


def envelope_problem(path: str, status: int, body: Any) -> str | None:
    """Why ``body`` is not the error envelope of the service that owns ``path`` (None when it is)."""
    service = path.lstrip("/").split("/", 1)[0]
    if not isinstance(body, dict):
        return f"not a JSON object: {body!r}"
    if service == "compute":
        if len(body) != 1:
            return "nova's fault has exactly one key"
        (fault, inner), = body.items()
        if fault not in NOVA_FAULTS or not isinstance(inner, dict) or inner.get("code") != status \
                or not isinstance(inner.get("message"), str):
            return "not nova's {fault: {code, message}}"
        return None
    if service == "network":
        inner = body.get("NeutronError")
        if set(body) != {"NeutronError"} or not isinstance(inner, dict) or set(inner) != {"type", "message", "detail"}:
            return "not neutron's {NeutronError: {type, message, detail}}"
        return None
    if service == "baremetal":
        if set(body) != {"error_message"} or not isinstance(body["error_message"], str):
            return "not ironic's {error_message: <json>}"
        fault = json.loads(body["error_message"])
        if not isinstance(fault.get("faultstring"), str) or fault.get("faultcode") != "Client":
            return "ironic's error_message holds no client faultstring"
        return None
    if service == "image":
        if body.get("code") != status or not isinstance(body.get("message"), str) or "title" not in body:
            return "not glance's {code, title, message}"
        return None
    if service == "identity":
        inner = body.get("error")
        if set(body) != {"error"} or not isinstance(inner, dict) or inner.get("code") != status \
                or not isinstance(inner.get("message"), str):
            return "not keystone's {error: {code, title, message}}"
        return None
    if service == "orchestration":
        inner = body.get("error")
        if set(body) != {"explanation", "code", "title", "error"} or body.get("code") != status \
                or not isinstance(inner, dict) or not isinstance(inner.get("message"), str) \
                or not isinstance(inner.get("type"), str):
            return "not heat's {explanation, code, title, error: {message, traceback, type}}"
        return None
    return f"no service owns {path}"


# -- real resources for the second pass ---------------------------------------------------------


def real_resources(base_url: str, token: str) -> dict[str, str]:
    """One of each resource the paths name, made on the fuzzed cloud, by path parameter."""
    auth = {"X-Auth-Token": token}
    client = httpx.Client(base_url=base_url, headers=auth, timeout=30)
    with client:
        network = client.get("/network/v2.0/networks", params={"name": "private"}).json()["networks"][0]
        subnet = network["subnets"][0]
        port = client.post("/network/v2.0/ports", json={"port": {"network_id": network["id"], "name": "fuzz"}})
        image = client.get("/image/v2/images", params={"name": "cirros"}).json()["images"][0]
        own_image = client.post("/image/v2/images", json={"name": "fuzz", "tags": ["fuzz"]})
        server = client.post("/compute/v2.1/servers", json={"server": {
            "name": "fuzz", "flavorRef": "1", "imageRef": image["id"], "networks": [{"uuid": network["id"]}]}})
        assert port.status_code == 201 and own_image.status_code == 201 and server.status_code == 202
        server_id = server.json()["server"]["id"]
        ironic = {"X-OpenStack-Ironic-API-Version": "1.99"}
        node = client.get("/baremetal/v1/nodes/node-1", headers=ironic).json()
        nic = client.get("/baremetal/v1/ports", params={"node": node["uuid"]}, headers=ironic).json()["ports"][0]
        chassis = client.post("/baremetal/v1/chassis", json={"description": "fuzz"}, headers=ironic)
        portgroup = client.post("/baremetal/v1/portgroups", json={"node_uuid": node["uuid"], "name": "fuzz-pg"},
                                headers=ironic)
        allocation = client.post("/baremetal/v1/allocations", json={"resource_class": "fuzz", "name": "fuzz"},
                                 headers=ironic)
        assert chassis.status_code == 201 and portgroup.status_code == 201, portgroup.text
        assert allocation.status_code == 201, allocation.text
        template = client.post("/baremetal/v1/deploy_templates", headers=ironic, json={
            "name": "CUSTOM_FUZZ", "steps": [{"interface": "bios", "step": "apply_configuration", "args": {},
                                              "priority": 10}]})
        runbook = client.post("/baremetal/v1/runbooks", headers=ironic, json={
            "name": "CUSTOM_FUZZ", "steps": [{"interface": "bios", "step": "apply_configuration", "args": {},
                                              "order": 1}]})
        assert template.status_code == 201 and runbook.status_code == 201, runbook.text
        hypervisor = client.get("/compute/v2.1/os-hypervisors",
                                headers={"X-OpenStack-Nova-API-Version": "2.53"}).json()["hypervisors"][0]
        deadline = time.monotonic() + 30
        while True:  # the server's port is bound once it is built
            attached = client.get(f"/compute/v2.1/servers/{server_id}/os-interface").json()["interfaceAttachments"]
            if attached or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        actions = client.get(f"/compute/v2.1/servers/{server_id}/os-instance-actions").json()["instanceActions"]
        group = client.post("/network/v2.0/security-groups", json={"security_group": {"name": "fuzz"}}).json()
        router = client.post("/network/v2.0/routers", json={"router": {"name": "fuzz"}}).json()["router"]
        public = client.get("/network/v2.0/networks", params={"name": "public"}).json()["networks"][0]
        fip = client.post("/network/v2.0/floatingips", json={"floatingip": {"floating_network_id": public["id"]}})
        agent = client.get("/network/v2.0/agents").json()["agents"][0]
    return {
        "security-groups": group["security_group"]["id"],
        "security-group-rules": group["security_group"]["security_group_rules"][0]["id"],
        "routers": router["id"], "router_id": router["id"], "floatingips": fip.json()["floatingip"]["id"],
        "agent_id": agent["id"], "project_id": network["project_id"], "kind": "networks",
        "resource_id": network["id"],
        "server_id": server_id, "port_id": attached[0]["port_id"] if attached else port.json()["port"]["id"],
        "request_id": actions[0]["request_id"], "flavor_id": "1", "hypervisor_id": hypervisor["id"],
        "alias": "binding", "image_id": own_image.json()["id"], "tag": "fuzz",
        "networks": network["id"], "subnets": subnet, "ports": port.json()["port"]["id"],
        "nodes": node["uuid"], "baremetal-ports": nic["uuid"], "portgroups": portgroup.json()["uuid"],
        "uuid": chassis.json()["uuid"], "vif_id": port.json()["port"]["id"],
        "allocations": allocation.json()["uuid"], "deploy_templates": template.json()["uuid"],
        "runbooks": runbook.json()["uuid"], "heartbeat": node["uuid"],
    }


def path_parameters(path: str, names: list[str], real: dict[str, str]) -> dict[str, str]:
    """The real resource for each of ``path``'s parameters (``key`` and ``ident`` depend on the collection)."""
    collection = path.split("/")[3]
    chosen = {}
    for name in names:
        if name == "key" and path.startswith("/network/"):
            chosen[name] = real[collection]
        elif name == "ident":
            chosen[name] = real["baremetal-ports" if collection == "ports" else collection]
        elif name in real:
            chosen[name] = real[name]
    return chosen


# -- the run ------------------------------------------------------------------------------------


def test_openapi_document_describes_every_service_and_its_bodies(fuzzed_cloud: LiveCloud) -> None:
    document = httpx.get(f"{fuzzed_cloud.base_url}/openapi.json", timeout=30).json()
    paths = document["paths"]
    for prefix in ("/identity/v3", "/compute/v2.1/", "/network/v2.0/", "/image/v2/", "/baremetal/v1/",
                   "/orchestration/v1/"):
        assert any(path.startswith(prefix) for path in paths), prefix
    assert document["components"]["securitySchemes"]["keystone_token"] == {
        "type": "apiKey", "in": "header", "name": "X-Auth-Token",
        "description": "A token from POST /identity/v3/auth/tokens (its X-Subject-Token header)."}
    for path, operations in paths.items():
        for method, operation in operations.items():
            if method in ("post", "put", "patch") and path != "/baremetal/v1/nodes/{ident}/maintenance" \
                    and "/tags/" not in path and "/traits/{trait}" not in path:
                assert operation["requestBody"]["content"], (method, path)
    server = paths["/compute/v2.1/servers"]["post"]
    assert server["security"] == [{"keystone_token": []}]
    assert "imageRef" in server["requestBody"]["content"]["application/json"]["schema"]["properties"]["server"][
        "properties"]
    assert "security" not in paths["/identity/v3/auth/tokens"]["post"]
    versions = {p["name"]: p for p in paths["/baremetal/v1/nodes"]["get"]["parameters"]}
    assert "1.99" in versions["X-OpenStack-Ironic-API-Version"]["schema"]["enum"]
    assert set(paths["/image/v2/images/{image_id}"]["patch"]["requestBody"]["content"]) == set(PATCH_MEDIA_TYPES)


def test_no_generated_request_gets_a_5xx_or_another_services_envelope(fuzzed_cloud: LiveCloud) -> None:
    base_url = fuzzed_cloud.base_url
    token = admin_token(base_url)
    # The token is always sent: what happens without one is test_every_secured_operation_wants_a_token's.
    config = schemathesis.Config.from_dict({"generation": {"with-security-parameters": False}})
    schema = schemathesis.openapi.from_url(f"{base_url}/openapi.json", config=config, timeout=30)
    real = real_resources(base_url, token)
    session = requests.Session()
    failures: list[str] = []
    answered: dict[int, int] = {}
    operations = [result.ok() for result in schema.get_all_operations()]
    runs = 0

    def exercise(operation: Any, mode: GenerationMode, fixed: dict[str, str] | None) -> None:
        @settings(max_examples=MAX_EXAMPLES, deadline=None, derandomize=True, database=None,
                  phases=(Phase.explicit, Phase.generate, Phase.shrink), suppress_health_check=list(HealthCheck))
        @given(case=operation.as_strategy(generation_mode=mode, path_parameters=fixed))
        def run(case: schemathesis.Case) -> None:
            response = case.call(base_url=base_url, session=session, headers={"X-Auth-Token": token}, timeout=30)
            answered[response.status_code] = answered.get(response.status_code, 0) + 1
            case.validate_response(response, checks=[not_a_server_error])
            if 400 <= response.status_code < 500 and case.method != "HEAD":
                problem = envelope_problem(operation.path, response.status_code, response.json())
                assert problem is None, f"{response.status_code} {problem}: {response.text}"

        run()

    for operation in operations:
        names = [p.name for p in operation.path_parameters]
        passes: list[dict[str, str] | None] = [None]
        if names and operation.method.upper() != "DELETE":
            passes.append(path_parameters(operation.path, names, real))
        for fixed in passes:
            # A path parameter is text whatever it holds, so only a body, a query or a header can be made
            # invalid; and a body of raw bytes (an image's data) is valid whatever it holds.
            raw_bytes = all(body.media_type == "application/octet-stream" for body in operation.body)
            modes = [GenerationMode.POSITIVE]
            if operation.query or operation.headers or (operation.body and not raw_bytes):
                modes.append(GenerationMode.NEGATIVE)
            for mode in modes:
                runs += 1
                try:
                    exercise(operation, mode, fixed)
                except Exception:  # every operation's failure is reported, not just the first
                    failures.append(f"{operation.label} [{mode.value}{', real ids' if fixed else ''}]\n"
                                    f"{traceback.format_exc(limit=0)}")
    session.close()
    assert not failures, f"{len(failures)} of {runs} runs failed:\n\n" + "\n\n".join(failures)
    # the run reached the services: real 2xx answers as well as refusals
    assert sum(count for status, count in answered.items() if status < 300) > 50, answered
    assert sum(count for status, count in answered.items() if 400 <= status < 500) > 500, answered
