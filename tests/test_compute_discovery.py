"""What a client reads to learn the compute API: the version documents the version list links to, and
nova's (deprecated) extension list, on the live server in raw HTTP."""

from __future__ import annotations

import httpx
import pytest

from tests.test_api_compute import Nova, fault_of, issue_token


@pytest.fixture(scope="module")
def demo(live_cloud) -> Nova:
    return Nova(live_cloud, issue_token(live_cloud, "demo", "demo", "demo"))


def test_every_listed_version_document_can_be_followed(live_cloud, demo) -> None:
    versions = httpx.get(f"{live_cloud.base_url}/compute/", timeout=30).json()["versions"]
    assert {version["id"] for version in versions} == {"v2.0", "v2.1"}
    for version in versions:
        link, = [link["href"] for link in version["links"] if link["rel"] == "self"]
        followed = httpx.get(link, headers={"X-Auth-Token": demo.token}, timeout=30)
        assert followed.status_code == 200, (link, followed.text)
        assert followed.json()["version"]["id"] == version["id"]
        assert [x["href"] for x in followed.json()["version"]["links"] if x["rel"] == "self"] == [link]


def test_the_extension_list(demo) -> None:
    extensions = demo.get("/extensions").json()["extensions"]
    assert "Hosts" in {extension["name"] for extension in extensions}
    consoles = demo.get("/extensions/os-consoles").json()["extension"]
    assert consoles["alias"] == "os-consoles" and consoles in extensions
    fault_of(demo.get("/extensions/os-nothing"), "itemNotFound", 404)
