"""Each request is matched against its collection's routes only (``api/app.py``): what that must not change,
on the live server in raw HTTP: a collection no route names, a method a collection does not have, a path
with a parameter before its collection, a trailing slash, the version documents above the collections."""

from __future__ import annotations

import httpx
import pytest

from tests.test_api_compute import Nova, fault_of, issue_token


@pytest.fixture(scope="module")
def admin(live_cloud) -> Nova:
    return Nova(live_cloud, issue_token(live_cloud, "admin", "admin", "admin"))


def test_collections_unknown_or_asked_the_wrong_method(live_cloud, admin) -> None:
    fault_of(admin.get("/no-such-collection"), "itemNotFound", 404)
    assert admin.call("DELETE", "/flavors").status_code == 405
    assert admin.get("/flavors/1").json()["flavor"]["id"] == "1"
    headers = {"X-Auth-Token": admin.token}
    assert httpx.get(f"{live_cloud.base_url}/network/v2.0/ports", headers=headers, timeout=30).status_code == 200
    slashed = httpx.get(f"{live_cloud.base_url}/network/v2.0/ports/", headers=headers, timeout=30,
                        follow_redirects=True)
    assert slashed.status_code == 200 and "ports" in slashed.json()
    missing = httpx.get(f"{live_cloud.base_url}/network/v2.0/nothing-here", headers=headers, timeout=30)
    assert missing.status_code == 404 and "NeutronError" in missing.json()


def test_version_documents_and_parameters_before_the_collection(live_cloud, admin) -> None:
    for path in ("/compute", "/compute/", "/compute/v2.1", "/compute/v2.1/", "/network", "/identity/v3"):
        assert httpx.get(f"{live_cloud.base_url}{path}", timeout=30).status_code == 200, path
    # heat's paths carry the project before the collection
    project = admin.project_id()
    stacks = httpx.get(f"{live_cloud.base_url}/orchestration/v1/{project}/stacks",
                       headers={"X-Auth-Token": admin.token}, timeout=30)
    assert stacks.status_code == 200 and isinstance(stacks.json()["stacks"], list)
