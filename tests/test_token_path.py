"""The token path as a service uses it, through openstacksdk against a live `tether serve`.

A service logs in again and again with one password; what the identity service remembers of that
password must never outlive the right it stood for. Also the other ways a service avoids a password
per call: re-scoping a token (keystone's ``token`` method, keystoneauth's ``v3token``) and
application credentials (``v3applicationcredential``).
"""

from __future__ import annotations

import uuid

import httpx
import openstack
import pytest
from openstack import exceptions

AUTH_URL_PATH = "/identity/v3"


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def connect(live_cloud, **auth: str) -> openstack.connection.Connection:
    auth_type = auth.pop("auth_type", "password")
    return openstack.connection.Connection(
        auth_type=auth_type, auth={"auth_url": live_cloud.base_url + AUTH_URL_PATH, **auth},
        region_name="RegionOne", identity_api_version="3")


def password_login(live_cloud, user: str, password: str, project: str) -> openstack.connection.Connection:
    return connect(live_cloud, username=user, password=password, project_name=project,
                   user_domain_name="Default", project_domain_name="Default")


@pytest.fixture
def service_user(sdk):
    """A user of its own on a project of its own, admin there, as a deployment makes one per service."""
    name, password = unique("svc"), "svc-secret"
    project = sdk.identity.create_project(name=unique("svcproj"), domain_id="default")
    user = sdk.identity.create_user(name=name, password=password, domain_id="default")
    sdk.identity.assign_project_role_to_user(project, user, sdk.identity.find_role("admin"))
    yield user, password, project
    if sdk.identity.find_user(user.id):
        sdk.identity.delete_user(user)
    sdk.identity.delete_project(project)


def logs_in(live_cloud, user, password: str, project) -> bool:
    connection = password_login(live_cloud, user.name, password, project.name)
    try:
        connection.authorize()
        return True
    except exceptions.SDKException as error:  # keystoneauth's 401, as the sdk's authorize() raises it
        assert "(HTTP 401)" in str(error), error
        return False
    finally:
        connection.close()


def test_a_service_logging_in_per_call_keeps_working_and_each_login_is_its_own_token(
        live_cloud, service_user) -> None:
    user, password, project = service_user
    tokens = set()
    for _ in range(6):
        connection = password_login(live_cloud, user.name, password, project.name)
        tokens.add(connection.authorize())
        assert [n.name for n in connection.network.networks(name="private")] == ["private"]
        connection.close()
    assert len(tokens) == 6


def test_a_remembered_password_stops_working_the_moment_it_is_changed(live_cloud, sdk, service_user) -> None:
    user, password, project = service_user
    assert logs_in(live_cloud, user, password, project) and logs_in(live_cloud, user, password, project)
    sdk.identity.update_user(user, password="a-new-secret")
    assert not logs_in(live_cloud, user, password, project)
    assert logs_in(live_cloud, user, "a-new-secret", project)


def test_a_remembered_password_stops_working_when_the_user_is_disabled_then_deleted(
        live_cloud, sdk, service_user) -> None:
    user, password, project = service_user
    assert logs_in(live_cloud, user, password, project)
    sdk.identity.update_user(user, is_enabled=False)
    assert not logs_in(live_cloud, user, password, project)
    sdk.identity.update_user(user, is_enabled=True)
    assert logs_in(live_cloud, user, password, project)
    sdk.identity.delete_user(user)
    assert not logs_in(live_cloud, user, password, project)


def test_a_remembered_password_does_not_open_a_locked_account(live_cloud, service_user) -> None:
    """The shared cloud locks after six wrong passwords (keystone's lockout, on by default here)."""
    user, password, project = service_user
    assert logs_in(live_cloud, user, password, project)
    for _ in range(6):
        assert not logs_in(live_cloud, user, "not-it", project)
    connection = password_login(live_cloud, user.name, password, project.name)
    with pytest.raises(exceptions.SDKException) as refused:
        connection.authorize()
    assert "(HTTP 401)" in str(refused.value) and "The account is locked for user" in str(refused.value)


def test_an_unscoped_token_is_rescoped_to_a_project_through_the_sdk(live_cloud, service_user) -> None:
    user, password, _ = service_user
    unscoped = connect(live_cloud, username=user.name, password=password, user_domain_name="Default")
    token = unscoped.authorize()
    body = httpx.get(f"{live_cloud.base_url}{AUTH_URL_PATH}/auth/tokens",
                     headers={"X-Auth-Token": token, "X-Subject-Token": token}).json()["token"]
    assert "project" not in body
    project_name = service_user[2].name
    rescoped = connect(live_cloud, auth_type="v3token", token=token, project_name=project_name,
                       project_domain_name="Default")
    scoped_token = rescoped.authorize()
    scoped = httpx.get(f"{live_cloud.base_url}{AUTH_URL_PATH}/auth/tokens",
                       headers={"X-Auth-Token": scoped_token, "X-Subject-Token": scoped_token}).json()["token"]
    assert scoped["project"]["name"] == project_name and scoped["methods"] == ["token", "password"]
    assert scoped["audit_ids"][1] == body["audit_ids"][0]
    assert scoped["expires_at"] == body["expires_at"]  # re-scoping never extends a login
    assert list(rescoped.network.networks(name="private"))
    rescoped.close()
    unscoped.close()


def test_rescoping_refuses_what_keystone_refuses(live_cloud, service_user) -> None:
    user, password, project = service_user
    url = f"{live_cloud.base_url}{AUTH_URL_PATH}/auth/tokens"

    def rescope(token_id: object, scope: object | None = None) -> httpx.Response:
        auth: dict[str, object] = {"identity": {"methods": ["token"], "token": {"id": token_id}}}
        if scope is not None:
            auth["scope"] = scope
        return httpx.post(url, json={"auth": auth})

    assert rescope("no-such-token").status_code == 404
    missing = httpx.post(url, json={"auth": {"identity": {"methods": ["token"], "token": {}}}})
    assert missing.status_code == 400 and "Expecting to find id in token" in missing.json()["error"]["message"]
    token = password_login(live_cloud, user.name, password, project.name)
    token_id = token.authorize()
    token.close()
    # a project this user has no role on
    assert rescope(token_id, {"project": {"name": "demo", "domain": {"id": "default"}}}).status_code == 401
    # an admin's system token does not buy a project token
    system = httpx.post(url, json={"auth": {"identity": {"methods": ["password"], "password": {"user": {
        "name": "admin", "domain": {"id": "default"}, "password": "admin"}}}, "scope": {"system": {"all": True}}}})
    refused = rescope(system.headers["X-Subject-Token"], {"project": {"name": "admin", "domain": {"id": "default"}}})
    assert refused.status_code == 403, refused.text


def test_an_application_credential_logs_in_repeatedly_and_not_after_its_deletion(live_cloud, service_user) -> None:
    user, password, project = service_user
    owner = password_login(live_cloud, user.name, password, project.name)
    credential = owner.identity.create_application_credential(user=user.id, name=unique("ironic"))
    for _ in range(3):
        as_credential = connect(live_cloud, auth_type="v3applicationcredential",
                                application_credential_id=credential.id,
                                application_credential_secret=credential.secret)
        assert list(as_credential.network.networks(name="private"))
        as_credential.close()
    # keystone: an application credential chooses no scope; a scope asked for is a 401
    scoped = httpx.post(f"{live_cloud.base_url}{AUTH_URL_PATH}/auth/tokens", json={"auth": {
        "identity": {"methods": ["application_credential"], "application_credential": {
            "id": credential.id, "secret": credential.secret}},
        "scope": {"project": {"id": project.id}}}})
    assert scoped.status_code == 401 and "cannot request a scope" in scoped.json()["error"]["message"]
    owner.identity.delete_application_credential(user.id, credential.id)
    after = connect(live_cloud, auth_type="v3applicationcredential", application_credential_id=credential.id,
                    application_credential_secret=credential.secret)
    with pytest.raises(exceptions.SDKException) as refused:
        after.authorize()
    assert "(HTTP 401)" in str(refused.value)
    owner.close()
