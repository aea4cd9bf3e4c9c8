"""Keystone's credentials, OS-EC2, OS-INHERIT, domain configurations, OAuth1 consumers, policies, endpoint
groups and the token method, as their users meet them: the `openstack` CLI, openstacksdk and keystoneauth
sessions against a live `tether serve`.

Tests name what they create uniquely: the live cloud is shared by the session.
"""

from __future__ import annotations

import hashlib
import json
import uuid

import httpx
import pytest


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def cli_json(live_cloud, *args: str, cloud: str = "tether") -> object:
    return json.loads(live_cloud.cli(*args, "-f", "json", cloud=cloud).stdout)


def login(base_url: str, user_id: str, password: str, scope: dict | str | None = None) -> httpx.Response:
    auth: dict[str, object] = {"identity": {"methods": ["password"], "password": {
        "user": {"id": user_id, "password": password}}}}
    if scope is not None:
        auth["scope"] = scope
    return httpx.post(f"{base_url}/identity/v3/auth/tokens", json={"auth": auth}, timeout=30)


@pytest.fixture(scope="module")
def member(live_cloud):
    """A user with the member role on a project of their own, and a token there."""
    project = cli_json(live_cloud, "project", "create", unique("cred"))
    user = cli_json(live_cloud, "user", "create", unique("cred"), "--password", "pw")
    live_cloud.cli("role", "add", "--user", user["id"], "--project", project["id"], "member")
    response = login(live_cloud.base_url, user["id"], "pw", {"project": {"id": project["id"]}})
    assert response.status_code == 201, response.text
    return {"user": user, "project": project, "token": response.headers["X-Subject-Token"]}


# -- credentials and OS-EC2 -------------------------------------------------------------------------


def test_credential_crud_through_the_cli_and_an_ec2_credentials_id_is_its_access_keys_sha256(live_cloud, sdk) -> None:
    user = cli_json(live_cloud, "user", "create", unique("cred"))
    project = cli_json(live_cloud, "project", "create", unique("cred"))
    blob = json.dumps({"access": unique("access"), "secret": "s3cret"})
    created = cli_json(live_cloud, "credential", "create", user["id"], blob, "--type", "ec2",
                       "--project", project["id"])
    assert created["id"] == hashlib.sha256(json.loads(blob)["access"].encode()).hexdigest()
    assert (created["user_id"], created["project_id"], created["type"]) == (user["id"], project["id"], "ec2")

    other = cli_json(live_cloud, "credential", "create", user["id"], "a certificate", "--type", "cert")
    listed = cli_json(live_cloud, "credential", "list", "--user", user["id"], "--type", "cert")
    assert [c["ID"] for c in listed] == [other["id"]]

    new_blob = json.dumps({"access": json.loads(blob)["access"], "secret": "rotated"})
    live_cloud.cli("credential", "set", created["id"], "--user", user["id"], "--type", "ec2", "--data", new_blob,
                   "--project", project["id"])
    assert json.loads(cli_json(live_cloud, "credential", "show", created["id"])["blob"])["secret"] == "rotated"

    live_cloud.cli("credential", "delete", created["id"])
    gone = live_cloud.cli("credential", "show", created["id"], check=False)
    assert gone.returncode != 0 and "Could not find credential" in gone.stderr
    # a user's credentials go with the user, as keystone's delete_credentials_for_user
    live_cloud.cli("user", "delete", user["id"])
    assert sdk.identity.get(f"/credentials?user_id={user['id']}").json()["credentials"] == []


def test_an_ec2_credential_needs_a_project_and_a_blob_with_an_access_key(live_cloud, sdk) -> None:
    user_id = sdk.current_user_id
    base = f"{live_cloud.base_url}/identity/v3"
    headers = {"X-Auth-Token": sdk.auth_token}
    cases = [
        ({"type": "ec2", "user_id": user_id, "blob": '{"access": "x"}'}, "'project_id' is a required property"),
        ({"type": "ec2", "user_id": user_id, "blob": "not json", "project_id": "p"}, "Invalid blob in credential"),
        ({"type": "ec2", "user_id": user_id, "blob": '{"secret": "x"}', "project_id": "p"},
         "Expecting to find access in credential"),
        ({"type": "ec2", "blob": "{}"}, "'user_id' is a required property"),
    ]
    for body, message in cases:
        response = httpx.post(f"{base}/credentials", json={"credential": body}, headers=headers)
        assert response.status_code == 400, response.text
        assert message in response.json()["error"]["message"]
    access = unique("dup")
    body = {"type": "ec2", "user_id": user_id, "blob": json.dumps({"access": access}), "project_id": "p"}
    assert httpx.post(f"{base}/credentials", json={"credential": body}, headers=headers).status_code == 201
    again = httpx.post(f"{base}/credentials", json={"credential": body}, headers=headers)
    assert again.status_code == 409 and again.json()["error"]["title"] == "Conflict"


def test_ec2_credentials_through_the_cli_for_a_member_who_sees_only_their_own(live_cloud, member) -> None:
    base = f"{live_cloud.base_url}/identity/v3"
    user_id, project_id = member["user"]["id"], member["project"]["id"]
    headers = {"X-Auth-Token": member["token"]}
    made = httpx.post(f"{base}/users/{user_id}/credentials/OS-EC2", json={"tenant_id": project_id}, headers=headers)
    assert made.status_code == 201, made.text
    ec2 = made.json()["credential"]
    assert (ec2["user_id"], ec2["tenant_id"]) == (user_id, project_id) and ec2["secret"]

    shown = httpx.get(f"{base}/users/{user_id}/credentials/OS-EC2/{ec2['access']}", headers=headers).json()
    assert shown["credential"]["secret"] == ec2["secret"]
    # the same key through /v3/credentials, under the sha256 of the access key
    cred_id = hashlib.sha256(ec2["access"].encode()).hexdigest()
    assert httpx.get(f"{base}/credentials/{cred_id}", headers=headers).json()["credential"]["type"] == "ec2"
    # the admin's CLI lists it for the user too
    rows = cli_json(live_cloud, "ec2", "credentials", "list", "--user", user_id)
    assert [r["Access"] for r in rows] == [ec2["access"]]

    # another user's credentials are not the member's to read or make
    admin_id = cli_json(live_cloud, "user", "show", "admin")["id"]
    for method, path in (("GET", f"/users/{admin_id}/credentials/OS-EC2"),
                         ("POST", f"/users/{admin_id}/credentials/OS-EC2")):
        response = httpx.request(method, base + path, json={"tenant_id": project_id}, headers=headers)
        assert response.status_code == 403, response.text
    listed = httpx.get(f"{base}/credentials", headers=headers).json()["credentials"]
    assert {c["user_id"] for c in listed} == {user_id}

    deleted = httpx.delete(f"{base}/users/{user_id}/credentials/OS-EC2/{ec2['access']}", headers=headers)
    assert deleted.status_code == 204
    missing = httpx.get(f"{base}/users/{user_id}/credentials/OS-EC2/{ec2['access']}", headers=headers)
    assert missing.status_code == 404
    assert missing.json()["error"]["message"] == f"Could not find credential: {cred_id}."



def test_ec2_credentials_create_and_delete_through_the_cli(live_cloud) -> None:
    made = cli_json(live_cloud, "ec2", "credentials", "create")
    assert made["access"] and made["secret"]
    assert made["access"] in {r["Access"] for r in cli_json(live_cloud, "ec2", "credentials", "list")}
    live_cloud.cli("ec2", "credentials", "delete", made["access"])
    assert made["access"] not in {r["Access"] for r in cli_json(live_cloud, "ec2", "credentials", "list")}


# -- OS-INHERIT --------------------------------------------------------------------------------------


def test_an_inherited_domain_grant_reaches_every_project_in_it_and_logs_in_there(live_cloud) -> None:
    domain = cli_json(live_cloud, "domain", "create", unique("inh"))
    parent = cli_json(live_cloud, "project", "create", unique("inh"), "--domain", domain["id"])
    child = cli_json(live_cloud, "project", "create", unique("inh"), "--domain", domain["id"],
                     "--parent", parent["id"])
    user = cli_json(live_cloud, "user", "create", unique("inh"), "--domain", domain["id"], "--password", "pw")
    role = cli_json(live_cloud, "role", "create", unique("inh"))
    live_cloud.cli("role", "add", "--user", user["id"], "--domain", domain["id"], "--inherited", role["id"])

    direct = cli_json(live_cloud, "role", "assignment", "list", "--user", user["id"])
    assert [(r["Domain"], r["Inherited"]) for r in direct] == [(domain["id"], True)]
    effective = cli_json(live_cloud, "role", "assignment", "list", "--user", user["id"], "--effective")
    assert {(r["Role"], r["Project"]) for r in effective} == {(role["id"], parent["id"]), (role["id"], child["id"])}
    # not on the domain itself
    assert login(live_cloud.base_url, user["id"], "pw", {"domain": {"id": domain["id"]}}).status_code == 401
    token = login(live_cloud.base_url, user["id"], "pw", {"project": {"id": child["id"]}})
    assert token.status_code == 201, token.text
    assert [r["name"] for r in token.json()["token"]["roles"]] == [role["name"]]

    live_cloud.cli("role", "remove", "--user", user["id"], "--domain", domain["id"], "--inherited", role["id"])
    assert cli_json(live_cloud, "role", "assignment", "list", "--user", user["id"], "--effective") == []
    revoked = httpx.get(f"{live_cloud.base_url}/identity/v3/auth/projects",
                        headers={"X-Auth-Token": token.headers["X-Subject-Token"]})
    assert revoked.status_code == 401


def test_an_inherited_project_grant_reaches_the_projects_below_it_only(live_cloud) -> None:
    parent = cli_json(live_cloud, "project", "create", unique("tree"))
    child = cli_json(live_cloud, "project", "create", unique("tree"), "--parent", parent["id"])
    grandchild = cli_json(live_cloud, "project", "create", unique("tree"), "--parent", child["id"])
    group = cli_json(live_cloud, "group", "create", unique("tree"))
    user = cli_json(live_cloud, "user", "create", unique("tree"), "--password", "pw")
    live_cloud.cli("group", "add", "user", group["id"], user["id"])
    live_cloud.cli("role", "add", "--group", group["id"], "--project", parent["id"], "--inherited", "member")

    base = f"{live_cloud.base_url}/identity/v3"
    admin = {"X-Auth-Token": live_cloud.connect().auth_token}
    check = (f"{base}/OS-INHERIT/projects/{parent['id']}/groups/{group['id']}/roles/"
             f"{cli_json(live_cloud, 'role', 'show', 'member')['id']}/inherited_to_projects")
    assert httpx.head(check, headers=admin).status_code == 204
    listed = httpx.get(f"{base}/role_assignments", params={"scope.OS-INHERIT:inherited_to": "projects",
                                                           "group.id": group["id"]}, headers=admin).json()
    assert [a["scope"] for a in listed["role_assignments"]] == [
        {"project": {"id": parent["id"]}, "OS-INHERIT:inherited_to": "projects"}]
    effective = cli_json(live_cloud, "role", "assignment", "list", "--user", user["id"], "--effective",
                         "--names")
    assert {r["Project"].split("@")[0] for r in effective} == {child["name"], grandchild["name"]}
    assert login(live_cloud.base_url, user["id"], "pw", {"project": {"id": parent["id"]}}).status_code == 401
    assert login(live_cloud.base_url, user["id"], "pw", {"project": {"id": grandchild["id"]}}).status_code == 201
    # the plain grant list of the project does not show what it passes down
    assert httpx.get(f"{base}/projects/{parent['id']}/groups/{group['id']}/roles",
                     headers=admin).json()["roles"] == []


# -- domain configuration ------------------------------------------------------------------------------


def test_a_domains_config_is_kept_and_checked_as_keystone_does(live_cloud) -> None:
    domain = cli_json(live_cloud, "domain", "create", unique("cfg"))
    base = f"{live_cloud.base_url}/identity/v3/domains/{domain['id']}/config"
    headers = {"X-Auth-Token": live_cloud.connect().auth_token}
    config = {"identity": {"driver": "ldap"}, "ldap": {"url": "ldap://example.org", "password": "hidden"}}
    created = httpx.put(base, json={"config": config}, headers=headers)
    assert created.status_code == 201
    # the password is stored, never read back
    assert created.json() == {"config": {"identity": {"driver": "ldap"}, "ldap": {"url": "ldap://example.org"}}}
    assert httpx.get(f"{base}/ldap/url", headers=headers).json() == {"config": {"url": "ldap://example.org"}}
    replaced = httpx.put(base, json={"config": {"identity": {"driver": "sql"}}}, headers=headers)
    assert replaced.status_code == 200 and replaced.json() == {"config": {"identity": {"driver": "sql"}}}

    refused = httpx.patch(f"{base}/ldap", json={"config": {"ldap": {"no_such_option": 1}}}, headers=headers)
    assert refused.status_code == 403
    assert refused.json()["error"]["message"] == (
        "Invalid domain specific configuration: Option no_such_option in group ldap is not supported for "
        "domain specific configurations.")
    absent = httpx.patch(f"{base}/ldap", json={"config": {"ldap": {"url": "x"}}}, headers=headers)
    assert absent.status_code == 404
    assert httpx.get(base, headers=headers).json() == {"config": {"identity": {"driver": "sql"}}}

    assert httpx.delete(f"{base}/identity/driver", headers=headers).status_code == 204
    assert httpx.get(base, headers=headers).status_code == 404
    default = httpx.get(f"{live_cloud.base_url}/identity/v3/domains/config/identity/default", headers=headers)
    assert default.json() == {"config": {"identity": {"driver": "sql", "list_limit": None}}}


# -- OAuth1 consumers, policies, endpoint groups -------------------------------------------------------------


def test_oauth1_consumers_are_kept_and_the_oauth1_method_is_refused(live_cloud) -> None:
    base = f"{live_cloud.base_url}/identity/v3/OS-OAUTH1/consumers"
    headers = {"X-Auth-Token": live_cloud.connect().auth_token}
    made = httpx.post(base, json={"consumer": {"description": "ci"}}, headers=headers)
    assert made.status_code == 201 and made.json()["consumer"]["secret"]
    consumer_id = made.json()["consumer"]["id"]
    shown = httpx.get(f"{base}/{consumer_id}", headers=headers).json()["consumer"]
    assert shown["description"] == "ci" and "secret" not in shown
    no_secret = httpx.patch(f"{base}/{consumer_id}", json={"consumer": {"secret": "x"}}, headers=headers)
    assert no_secret.status_code == 400
    httpx.patch(f"{base}/{consumer_id}", json={"consumer": {"description": "changed"}}, headers=headers)
    assert httpx.get(f"{base}/{consumer_id}", headers=headers).json()["consumer"]["description"] == "changed"
    assert httpx.delete(f"{base}/{consumer_id}", headers=headers).status_code == 204
    assert httpx.get(f"{base}/{consumer_id}", headers=headers).status_code == 404

    oauth1 = httpx.post(f"{live_cloud.base_url}/identity/v3/auth/tokens", json={"auth": {"identity": {
        "methods": ["oauth1"], "oauth1": {}}}})
    assert oauth1.status_code == 401
    assert oauth1.json()["error"]["message"] == "Attempted to authenticate with an unsupported method."


def test_policies_and_endpoint_groups_through_the_sdk(sdk) -> None:
    policy = sdk.identity.post("/policies", json={"policy": {"type": "application/json", "blob": "{}"}})
    assert policy.status_code == 201
    policy_id = policy.json()["policy"]["id"]
    sdk.identity.patch(f"/policies/{policy_id}", json={"policy": {"type": "text/plain"}})
    assert sdk.identity.get(f"/policies/{policy_id}").json()["policy"]["type"] == "text/plain"
    assert sdk.identity.delete(f"/policies/{policy_id}").status_code == 204

    service = sdk.identity.create_service(type=unique("svc"), name=unique("svc"))
    made = sdk.identity.post("/OS-EP-FILTER/endpoint_groups", json={"endpoint_group": {
        "name": unique("eg"), "filters": {"service_id": service.id}}})
    assert made.status_code == 201
    group = made.json()["endpoint_group"]
    assert group in sdk.identity.get("/OS-EP-FILTER/endpoint_groups").json()["endpoint_groups"]
    bad = sdk.identity.patch(f"/OS-EP-FILTER/endpoint_groups/{group['id']}",
                             json={"endpoint_group": {"filters": {"url": "x"}}})
    assert bad.status_code == 400
    assert sdk.identity.head(f"/OS-EP-FILTER/endpoint_groups/{group['id']}").status_code == 200
    assert sdk.identity.delete(f"/OS-EP-FILTER/endpoint_groups/{group['id']}").status_code == 204
    sdk.identity.delete_service(service)


# -- the token method ---------------------------------------------------------------------------------------


def test_a_token_rescoped_to_a_project_keeps_its_expiry_and_a_default_project_scopes_a_plain_login(
        live_cloud) -> None:
    project = cli_json(live_cloud, "project", "create", unique("resc"))
    user = cli_json(live_cloud, "user", "create", unique("resc"), "--password", "pw", "--project", project["id"])
    live_cloud.cli("role", "add", "--user", user["id"], "--project", project["id"], "member")
    # no scope asked: keystone scopes the token to the user's default project
    plain = login(live_cloud.base_url, user["id"], "pw")
    assert plain.json()["token"]["project"]["id"] == project["id"]
    unscoped = login(live_cloud.base_url, user["id"], "pw", "unscoped")
    assert "project" not in unscoped.json()["token"]

    rescoped = httpx.post(f"{live_cloud.base_url}/identity/v3/auth/tokens", json={"auth": {
        "identity": {"methods": ["token"], "token": {"id": unscoped.headers["X-Subject-Token"]}},
        "scope": {"project": {"id": project["id"]}}}})
    assert rescoped.status_code == 201, rescoped.text
    body = rescoped.json()["token"]
    assert set(body["methods"]) == {"token", "password"}
    assert body["expires_at"] == unscoped.json()["token"]["expires_at"]
    assert body["project"]["id"] == project["id"]
