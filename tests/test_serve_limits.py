"""Limits and headers every service answers with, from outside (a real serve, real HTTP).

A body beyond the limit is refused before any handler runs, in each service's own error
envelope, whether the client declared its length or streamed it in chunks; nothing is created.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest

from tether.api.middleware import MAX_BODY

# One create call per service, and where its collection is listed to check nothing appeared.
CREATES = {
    "identity": ("/identity/v3/projects", "/identity/v3/projects", "projects"),
    "compute": ("/compute/v2.1/os-keypairs", "/compute/v2.1/os-keypairs", "keypairs"),
    "network": ("/network/v2.0/networks", "/network/v2.0/networks", "networks"),
    "image": ("/image/v2/images", "/image/v2/images", "images"),
    "baremetal": ("/baremetal/v1/nodes", "/baremetal/v1/nodes", "nodes"),
    "orchestration": ("/orchestration/v1/{project}/stacks", "/orchestration/v1/{project}/stacks", "stacks"),
}


def envelope_message(service: str, body: dict) -> str:
    """The message of an error, read the way that service's own client reads it."""
    if service == "compute":
        return body["overLimit"]["message"] if "overLimit" in body else next(iter(body.values()))["message"]
    if service == "network":
        return body["NeutronError"]["message"]
    if service == "baremetal":
        return json.loads(body["error_message"])["faultstring"]
    if service == "orchestration":
        return body["error"]["message"]
    if service == "image":
        return body["message"]
    return body["error"]["message"]


@pytest.fixture(scope="module")
def http(live_cloud, sdk) -> Iterator[httpx.Client]:
    headers = {"X-Auth-Token": sdk.session.get_token(), "Content-Type": "application/json",
               "OpenStack-API-Version": "compute 2.92"}
    with httpx.Client(base_url=live_cloud.base_url, headers=headers, timeout=30) as client:
        yield client


def oversized() -> bytes:
    return json.dumps({"padding": "x" * (MAX_BODY + 1)}).encode()


@pytest.mark.parametrize("service", sorted(CREATES))
@pytest.mark.parametrize("chunked", [False, True], ids=["declared-length", "chunked"])
def test_a_body_over_the_limit_is_a_413_in_the_services_envelope_and_changes_nothing(
        http, sdk, service, chunked) -> None:
    create, listing, key = CREATES[service]
    create, listing = (path.format(project=sdk.current_project_id) for path in (create, listing))
    before = http.get(listing).json()[key]
    body = oversized()
    content = iter([body[i:i + 65536] for i in range(0, len(body), 65536)]) if chunked else body
    answer = http.post(create, content=content)
    assert answer.status_code == 413, answer.text
    assert envelope_message(service, answer.json()) == "Request is too large."
    assert answer.headers["x-openstack-request-id"].startswith("req-")
    assert http.get(listing).json()[key] == before


def test_responses_do_not_name_the_server_software(http) -> None:
    # Upstream services behind a WSGI server say nothing of what runs them; neither does Tether.
    for path in ("/identity/v3", "/compute/v2.1", "/network/v2.0/networks", "/nonexistent"):
        assert "server" not in http.get(path).headers, path
