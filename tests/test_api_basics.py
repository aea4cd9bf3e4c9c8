"""The live server's common ground: discovery, tokens, request ids, microversions, error envelopes."""

from __future__ import annotations

import json

import httpx


def token(live_cloud, user: str = "admin", password: str = "admin") -> str:
    body = {"auth": {"identity": {"methods": ["password"], "password": {
        "user": {"name": user, "domain": {"name": "Default"}, "password": password}}},
        "scope": {"project": {"name": user, "domain": {"name": "Default"}}}}}
    response = httpx.post(f"{live_cloud.base_url}/identity/v3/auth/tokens", json=body)
    assert response.status_code == 201
    return response.headers["X-Subject-Token"]


def test_sdk_authenticates_and_sees_every_service_in_the_catalog(sdk) -> None:
    services = {entry["type"] for entry in sdk.session.auth.get_access(sdk.session).service_catalog.catalog}
    assert services == {"identity", "compute", "network", "image", "baremetal", "orchestration"}


def test_every_response_carries_a_request_id_and_compute_echoes_its_microversion(live_cloud) -> None:
    response = httpx.get(f"{live_cloud.base_url}/compute/v2.1", headers={"OpenStack-API-Version": "compute 2.60"})
    assert response.headers["x-openstack-request-id"].startswith("req-")
    assert response.headers["openstack-api-version"] == "compute 2.60"
    assert response.headers["x-openstack-nova-api-version"] == "2.60"


def test_too_new_microversions_are_refused_with_406_as_ironicclient_expects(live_cloud) -> None:
    response = httpx.get(f"{live_cloud.base_url}/baremetal/v1/nodes",
                         headers={"X-OpenStack-Ironic-API-Version": "1.115"})
    assert response.status_code == 406
    assert "faultstring" in json.loads(response.json()["error_message"])
    root = httpx.get(f"{live_cloud.base_url}/baremetal/v1")
    assert root.headers["x-openstack-ironic-api-maximum-version"] == "1.99"


def test_bad_credentials_and_missing_tokens_get_401_in_the_services_envelope(live_cloud) -> None:
    body = {"auth": {"identity": {"methods": ["password"], "password": {
        "user": {"name": "admin", "domain": {"name": "Default"}, "password": "wrong"}}}}}
    response = httpx.post(f"{live_cloud.base_url}/identity/v3/auth/tokens", json=body)
    assert response.status_code == 401
    assert response.json()["error"]["message"] == "The request you have made requires authentication."
    assert httpx.get(f"{live_cloud.base_url}/identity/v3/auth/tokens").status_code == 401


def test_malformed_json_is_a_400_never_a_500(live_cloud) -> None:
    response = httpx.post(f"{live_cloud.base_url}/identity/v3/auth/tokens", content=b"{not json",
                          headers={"content-type": "application/json"})
    assert response.status_code == 400
    assert "Malformed request body" in response.json()["error"]["message"]


def test_a_revoked_token_stops_working(live_cloud) -> None:
    admin = token(live_cloud)
    subject = token(live_cloud)
    headers = {"X-Auth-Token": admin, "X-Subject-Token": subject}
    assert httpx.get(f"{live_cloud.base_url}/identity/v3/auth/tokens", headers=headers).status_code == 200
    assert httpx.delete(f"{live_cloud.base_url}/identity/v3/auth/tokens", headers=headers).status_code == 204
    assert httpx.get(f"{live_cloud.base_url}/identity/v3/auth/tokens", headers=headers).status_code == 404
