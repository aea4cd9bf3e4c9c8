"""Keystone's admin API as its users meet it: the `openstack` CLI and openstacksdk against a live `tether serve`.

Tests name what they create uniquely: the live cloud is shared by the session.
"""

from __future__ import annotations

import json
import uuid

import httpx
import pytest


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def cli_json(live_cloud, *args: str, cloud: str = "tether") -> object:
    return json.loads(live_cloud.cli(*args, "-f", "json", cloud=cloud).stdout)


def token_for(base_url: str, user: str, password: str, project: str | None = None,
              system: bool = False, domain: str | None = None) -> httpx.Response:
    auth: dict[str, object] = {"identity": {"methods": ["password"], "password": {
        "user": {"name": user, "domain": {"id": "default"}, "password": password}}}}
    if project:
        auth["scope"] = {"project": {"name": project, "domain": {"id": "default"}}}
    elif system:
        auth["scope"] = {"system": {"all": True}}
    elif domain:
        auth["scope"] = {"domain": {"id": domain}}
    return httpx.post(f"{base_url}/identity/v3/auth/tokens", json={"auth": auth}, timeout=30)


def test_the_cli_lists_projects_users_endpoints_services_and_server_list_resolves_a_project(live_cloud) -> None:
    projects = {p["Name"] for p in cli_json(live_cloud, "project", "list")}
    assert {"admin", "demo", "service"} <= projects
    assert {"admin", "demo"} <= {u["Name"] for u in cli_json(live_cloud, "user", "list")}
    services = {s["Type"] for s in cli_json(live_cloud, "service", "list")}
    assert {"identity", "compute", "network", "image", "baremetal", "orchestration"} <= services
    endpoints = cli_json(live_cloud, "endpoint", "list", "--service", "compute", "--interface", "public")
    assert [e["URL"] for e in endpoints] == [f"{live_cloud.base_url}/compute/v2.1"]
    # the CLI resolves "demo" through GET /v3/projects?name=demo
    live_cloud.cli("server", "list", "--project", "demo")


def test_project_user_group_role_lifecycle_and_effective_assignments_through_the_cli(live_cloud) -> None:
    project, user, group, role = unique("proj"), unique("user"), unique("grp"), unique("role")
    created = cli_json(live_cloud, "project", "create", project, "--description", "for a test",
                       "--tag", "blue")
    assert created["description"] == "for a test" and created["tags"] == ["blue"]
    child = cli_json(live_cloud, "project", "create", unique("child"), "--parent", project)
    assert child["parent_id"] == created["id"]
    cli_json(live_cloud, "user", "create", user, "--password", "s3cret", "--project", project,
             "--email", "u@example.com")
    assert cli_json(live_cloud, "user", "show", user)["email"] == "u@example.com"
    cli_json(live_cloud, "group", "create", group)
    live_cloud.cli("group", "add", "user", group, user)
    cli_json(live_cloud, "role", "create", role)
    live_cloud.cli("implied", "role", "create", role, "--implied-role", "reader")
    live_cloud.cli("role", "add", "--group", group, "--project", project, role)

    rows = cli_json(live_cloud, "role", "assignment", "list", "--names", "--effective", "--user", user)
    held = {(r["Role"], r["Project"]) for r in rows}
    assert held == {(role, f"{project}@Default"), ("reader", f"{project}@Default")}
    direct = cli_json(live_cloud, "role", "assignment", "list", "--names", "--group", group)
    assert [(r["Role"], r["Group"]) for r in direct] == [(role, f"{group}@Default")]

    # the user may now log in to the project, with the implied role in the token
    response = token_for(live_cloud.base_url, user, "s3cret", project=project)
    assert response.status_code == 201, response.text
    assert {r["name"] for r in response.json()["token"]["roles"]} == {role, "reader"}
    assert {e["type"] for e in response.json()["token"]["catalog"]} >= {"compute", "identity"}

    # taking the group's role back revokes the token it carried, at every service
    live_cloud.cli("role", "remove", "--group", group, "--project", project, role)
    token = response.headers["X-Subject-Token"]
    servers = httpx.get(f"{live_cloud.base_url}/compute/v2.1/servers", headers={"X-Auth-Token": token})
    assert servers.status_code == 401
    assert token_for(live_cloud.base_url, user, "s3cret", project=project).status_code == 401

    live_cloud.cli("group", "delete", group)
    live_cloud.cli("user", "delete", user)
    live_cloud.cli("project", "delete", child["id"])
    live_cloud.cli("project", "delete", project)
    live_cloud.cli("role", "delete", role)
    assert live_cloud.cli("project", "show", project, check=False).returncode != 0


def test_a_project_with_children_is_not_deleted(live_cloud) -> None:
    parent = cli_json(live_cloud, "project", "create", unique("parent"))
    cli_json(live_cloud, "project", "create", unique("leaf"), "--parent", parent["id"])
    result = live_cloud.cli("project", "delete", parent["id"], check=False)
    assert result.returncode != 0 and "not a leaf in the hierarchy" in result.stderr


def test_domains_regions_services_and_endpoints_through_the_cli(live_cloud) -> None:
    domain = unique("dom")
    cli_json(live_cloud, "domain", "create", domain, "--description", "d")
    assert live_cloud.cli("domain", "delete", domain, check=False).returncode != 0  # enabled: refused
    live_cloud.cli("domain", "set", "--disable", domain)
    live_cloud.cli("domain", "delete", domain)

    region = unique("Region")
    cli_json(live_cloud, "region", "create", region)
    service = cli_json(live_cloud, "service", "create", "--name", unique("svc"), unique("type"))
    endpoint = cli_json(live_cloud, "endpoint", "create", "--region", region, service["id"], "public",
                        "http://svc.example/v1/$(project_id)s")
    assert endpoint["region"] == region and endpoint["enabled"] is True

    # the catalog the tokens carry is built from these tables: the new endpoint is in it, filled in
    sdk_token = token_for(live_cloud.base_url, "admin", "admin", project="admin").json()["token"]
    entry = next(e for e in sdk_token["catalog"] if e["id"] == service["id"])
    assert entry["endpoints"][0]["url"] == f"http://svc.example/v1/{sdk_token['project']['id']}"

    live_cloud.cli("endpoint", "delete", endpoint["id"])
    live_cloud.cli("service", "delete", service["id"])
    live_cloud.cli("region", "delete", region)


def test_sdk_manages_users_and_a_changed_password_revokes_the_old_tokens(sdk, live_cloud) -> None:
    name = unique("sdkuser")
    project = sdk.identity.create_project(name=unique("sdkproj"))
    user = sdk.identity.create_user(name=name, password="first", default_project_id=project.id)
    member = sdk.identity.find_role("member")
    sdk.identity.assign_project_role_to_user(project, user, member)
    assert sdk.identity.validate_user_has_project_role(project, user, member)

    first = token_for(live_cloud.base_url, name, "first", project=project.name)
    assert first.status_code == 201
    changed = httpx.post(f"{live_cloud.base_url}/identity/v3/users/{user.id}/password",
                         json={"user": {"original_password": "first", "password": "second"}}, timeout=30)
    assert changed.status_code == 204
    check = httpx.get(f"{live_cloud.base_url}/identity/v3/auth/tokens",
                      headers={"X-Auth-Token": first.headers["X-Subject-Token"],
                               "X-Subject-Token": first.headers["X-Subject-Token"]})
    assert check.status_code == 401
    assert token_for(live_cloud.base_url, name, "second", project=project.name).status_code == 201

    sdk.identity.update_user(user, enabled=False)
    assert token_for(live_cloud.base_url, name, "second", project=project.name).status_code == 401
    sdk.identity.delete_user(user)
    sdk.identity.delete_project(project)


def test_system_scope_comes_from_system_grants(live_cloud) -> None:
    name = unique("sysreader")
    live_cloud.cli("user", "create", name, "--password", "pw")
    assert token_for(live_cloud.base_url, name, "pw", system=True).status_code == 401
    live_cloud.cli("role", "add", "--user", name, "--system", "all", "reader")
    response = token_for(live_cloud.base_url, name, "pw", system=True)
    assert response.status_code == 201 and response.json()["token"]["system"] == {"all": True}
    token = response.headers["X-Subject-Token"]
    # a system reader reads the admin API, and may not change it
    headers = {"X-Auth-Token": token}
    assert httpx.get(f"{live_cloud.base_url}/identity/v3/users", headers=headers).status_code == 200
    refused = httpx.post(f"{live_cloud.base_url}/identity/v3/projects", headers=headers,
                         json={"project": {"name": unique("nope")}})
    assert refused.status_code == 403
    assert refused.json() == {"error": {"code": 403, "title": "Forbidden", "message":
                                        "You are not authorized to perform the requested action: "
                                        "identity:create_project."}}
    live_cloud.cli("user", "delete", name)


# -- isolation between projects and domains ------------------------------------------------------------


@pytest.fixture(scope="module")
def two_projects(live_cloud):
    """Two projects with a member each, in a domain of their own."""
    domain = cli_json(live_cloud, "domain", "create", unique("iso"))
    made = {}
    for which in ("a", "b"):
        project = cli_json(live_cloud, "project", "create", unique(f"iso-{which}"), "--domain", domain["id"])
        user = cli_json(live_cloud, "user", "create", unique(f"iso-{which}"), "--domain", domain["id"],
                        "--password", "pw")
        live_cloud.cli("role", "add", "--user", user["id"], "--project", project["id"], "member")
        body = {"auth": {"identity": {"methods": ["password"], "password": {
            "user": {"id": user["id"], "password": "pw"}}}, "scope": {"project": {"id": project["id"]}}}}
        response = httpx.post(f"{live_cloud.base_url}/identity/v3/auth/tokens", json=body, timeout=30)
        assert response.status_code == 201, response.text
        made[which] = {"project": project, "user": user, "token": response.headers["X-Subject-Token"]}
    made["domain"] = domain
    return made


ADMIN_ONLY = [
    ("GET", "/v3/projects", None, "identity:list_projects"),
    ("GET", "/v3/users", None, "identity:list_users"),
    ("GET", "/v3/domains", None, "identity:list_domains"),
    ("GET", "/v3/role_assignments", None, "identity:list_role_assignments"),
    ("GET", "/v3/services", None, "identity:list_services"),
    ("GET", "/v3/endpoints", None, "identity:list_endpoints"),
    ("GET", "/v3/groups", None, "identity:list_groups"),
    ("POST", "/v3/projects", {"project": {"name": "x"}}, "identity:create_project"),
    ("POST", "/v3/users", {"user": {"name": "x"}}, "identity:create_user"),
    ("POST", "/v3/roles", {"role": {"name": "x"}}, "identity:create_role"),
    ("POST", "/v3/domains", {"domain": {"name": "x"}}, "identity:create_domain"),
    ("POST", "/v3/groups", {"group": {"name": "x"}}, "identity:create_group"),
    ("POST", "/v3/regions", {"region": {}}, "identity:create_region"),
    ("POST", "/v3/services", {"service": {"type": "x"}}, "identity:create_service"),
]


@pytest.mark.parametrize(("method", "path", "body", "action"), ADMIN_ONLY,
                         ids=[f"{m} {p}" for m, p, _, _ in ADMIN_ONLY])
def test_a_member_gets_keystones_403_on_each_admin_only_call(live_cloud, two_projects, method, path, body,
                                                             action) -> None:
    response = httpx.request(method, f"{live_cloud.base_url}/identity{path}", json=body,
                             headers={"X-Auth-Token": two_projects["a"]["token"]}, timeout=30)
    assert response.status_code == 403
    assert response.json() == {"error": {"code": 403, "title": "Forbidden", "message":
                                          f"You are not authorized to perform the requested action: {action}."}}


def test_a_member_sees_its_own_project_and_user_but_not_the_others(live_cloud, two_projects) -> None:
    a, b = two_projects["a"], two_projects["b"]
    headers = {"X-Auth-Token": a["token"]}
    base = f"{live_cloud.base_url}/identity/v3"
    own = httpx.get(f"{base}/auth/projects", headers=headers).json()["projects"]
    assert [p["id"] for p in own] == [a["project"]["id"]]
    mine = httpx.get(f"{base}/users/{a['user']['id']}/projects", headers=headers).json()["projects"]
    assert [p["id"] for p in mine] == [a["project"]["id"]]
    assert httpx.get(f"{base}/projects/{a['project']['id']}", headers=headers).status_code == 200
    assert httpx.get(f"{base}/users/{a['user']['id']}", headers=headers).status_code == 200
    # the other project, its member and that member's projects are out of reach
    assert httpx.get(f"{base}/projects/{b['project']['id']}", headers=headers).status_code == 403
    assert httpx.get(f"{base}/users/{b['user']['id']}", headers=headers).status_code == 403
    assert httpx.get(f"{base}/users/{b['user']['id']}/projects", headers=headers).status_code == 403
    for method in ("PATCH", "DELETE"):
        body = {"project": {"description": "mine now"}} if method == "PATCH" else None
        response = httpx.request(method, f"{base}/projects/{b['project']['id']}", json=body, headers=headers)
        assert response.status_code == 403
    grant = httpx.put(f"{base}/projects/{b['project']['id']}/users/{a['user']['id']}/roles/"
                      f"{cli_json(live_cloud, 'role', 'show', 'member')['id']}", headers=headers)
    assert grant.status_code == 403
    # nor can a member scope a token to a project where it holds no role
    body = {"auth": {"identity": {"methods": ["password"], "password": {
        "user": {"id": a["user"]["id"], "password": "pw"}}}, "scope": {"project": {"id": b["project"]["id"]}}}}
    assert httpx.post(f"{base}/auth/tokens", json=body).status_code == 401
    # nor see the other project's servers through compute
    servers = httpx.get(f"{live_cloud.base_url}/compute/v2.1/servers?all_tenants=1&project_id="
                        f"{b['project']['id']}", headers=headers)
    assert servers.status_code in (200, 403)
    if servers.status_code == 200:
        assert servers.json()["servers"] == []


def test_a_domain_reader_lists_its_domains_projects_only(live_cloud, two_projects) -> None:
    domain = two_projects["domain"]
    name = unique("domreader")
    cli_json(live_cloud, "user", "create", name, "--password", "pw")
    live_cloud.cli("role", "add", "--user", name, "--domain", domain["id"], "reader")
    response = token_for(live_cloud.base_url, name, "pw", domain=domain["id"])
    assert response.status_code == 201, response.text
    assert response.json()["token"]["domain"]["id"] == domain["id"]
    headers = {"X-Auth-Token": response.headers["X-Subject-Token"]}
    listed = httpx.get(f"{live_cloud.base_url}/identity/v3/projects", headers=headers)
    assert listed.status_code == 200
    assert {p["id"] for p in listed.json()["projects"]} == {two_projects["a"]["project"]["id"],
                                                            two_projects["b"]["project"]["id"]}
    domains = httpx.get(f"{live_cloud.base_url}/identity/v3/auth/domains", headers=headers).json()["domains"]
    assert [d["id"] for d in domains] == [domain["id"]]


def test_an_application_credential_logs_in_with_its_roles_and_dies_with_its_deletion(live_cloud) -> None:
    name, project = unique("acuser"), unique("acproj")
    cli_json(live_cloud, "project", "create", project)
    cli_json(live_cloud, "user", "create", name, "--password", "pw")
    live_cloud.cli("role", "add", "--user", name, "--project", project, "member")
    login = token_for(live_cloud.base_url, name, "pw", project=project)
    headers = {"X-Auth-Token": login.headers["X-Subject-Token"]}
    user_id = login.json()["token"]["user"]["id"]
    base = f"{live_cloud.base_url}/identity/v3"
    created = httpx.post(f"{base}/users/{user_id}/application_credentials", headers=headers,
                         json={"application_credential": {"name": "ci", "roles": [{"name": "reader"}]}})
    assert created.status_code == 201, created.text
    credential = created.json()["application_credential"]
    assert [r["name"] for r in credential["roles"]] == ["reader"] and credential["secret"]
    listed = httpx.get(f"{base}/users/{user_id}/application_credentials", headers=headers).json()
    assert [c["name"] for c in listed["application_credentials"]] == ["ci"]
    assert "secret" not in listed["application_credentials"][0]

    auth = {"auth": {"identity": {"methods": ["application_credential"], "application_credential": {
        "id": credential["id"], "secret": credential["secret"]}}}}
    token = httpx.post(f"{base}/auth/tokens", json=auth)
    assert token.status_code == 201, token.text
    body = token.json()["token"]
    assert body["methods"] == ["application_credential"] and body["project"]["name"] == project
    assert [r["name"] for r in body["roles"]] == ["reader"]
    wrong = {"auth": {"identity": {"methods": ["application_credential"], "application_credential": {
        "id": credential["id"], "secret": "not it"}}}}
    assert httpx.post(f"{base}/auth/tokens", json=wrong).status_code == 401

    # the other user's credentials are not this one's to see
    other = httpx.get(f"{base}/users/{user_id}/application_credentials",
                      headers={"X-Auth-Token": token_for(live_cloud.base_url, "demo", "demo", project="demo")
                               .headers["X-Subject-Token"]})
    assert other.status_code == 403

    deleted = httpx.delete(f"{base}/users/{user_id}/application_credentials/{credential['id']}", headers=headers)
    assert deleted.status_code == 204
    servers = httpx.get(f"{live_cloud.base_url}/compute/v2.1/servers",
                        headers={"X-Auth-Token": token.headers["X-Subject-Token"]})
    assert servers.status_code == 401
    assert httpx.post(f"{base}/auth/tokens", json=auth).status_code == 401
    live_cloud.cli("user", "delete", name)
    live_cloud.cli("project", "delete", project)
