"""The identity service on both backends: bootstrap, accounts, password tokens, catalog, token body."""

from __future__ import annotations

import random
import re
from typing import Any

import pytest
from argon2 import PasswordHasher, profiles

from tether.domain.errors import identity as errors
from tether.domain.identity import Token
from tether.runtime.clock import VirtualClock
from tether.runtime.runtime import Runtime
from tether.services.identity import catalog as catalogs
from tether.services.identity import passwords as passwords_module
from tether.services.identity.passwords import Passwords
from tether.services.identity.service import IdentityService
from tether.services.identity.token_format import token_body
from tether.services.identity.tokens import TokenCache, token_digest
from tether.store import repos
from tether.store.database import Store

CHEAP = PasswordHasher.from_parameters(profiles.CHEAPEST)
START = 1_767_225_600.0  # 2026-01-01T00:00:00Z
UNAUTHORIZED = "The request you have made requires authentication."
BASE = "http://tether.test:8774"


def make_identity(database, clock: VirtualClock | None = None, **options: Any) -> IdentityService:
    runtime = Runtime(clock=clock or VirtualClock(START))
    options.setdefault("password_hasher", CHEAP)
    return IdentityService(Store(database, runtime), runtime, random.Random(42), **options)


@pytest.fixture
def clock() -> VirtualClock:
    return VirtualClock(START)


@pytest.fixture
async def identity(database, clock) -> IdentityService:
    service = make_identity(database, clock)
    await service.bootstrap(admin_password="admin-secret", demo_password="demo-secret")
    return service


async def admin_token(identity: IdentityService, **scope: Any):
    scope = scope or {"project_name": "admin", "project_domain_name": "Default"}
    return await identity.authenticate(password="admin-secret", user_name="admin",
                                       user_domain_name="Default", **scope)


async def snapshot(identity: IdentityService) -> dict[str, list[Any]]:
    async with identity.store.begin() as conn:
        return {
            "domains": await repos.domains.find(conn),
            "projects": await repos.projects.find(conn),
            "users": [(u, u.password_hash) for u in await repos.users.find(conn)],
            "roles": await repos.roles.find(conn),
            "assignments": await repos.role_assignments.find(conn, order_by=("user_id", "project_id", "role_id")),
        }


# -- bootstrap ------------------------------------------------------------------


async def test_bootstrap_creates_the_default_cloud(identity) -> None:
    domain = await identity.get_domain("default")
    assert domain.name == "Default"
    assert [r.name for r in await identity.list_roles()] == ["admin", "member", "reader", "service"]
    assert {p.name for p in await identity.list_projects(domain_id="default")} == {"admin", "demo", "service"}
    admin = await identity.find_user("admin", domain_id="default")
    demo = await identity.find_user("demo", domain_id="default")
    admin_project = await identity.find_project("admin")
    demo_project = await identity.find_project("demo")
    assert [r.name for r in await identity.roles_for(admin.id, admin_project.id)] == ["admin", "member", "reader"]
    assert [r.name for r in await identity.roles_for(demo.id, demo_project.id)] == ["member", "reader"]
    assert await identity.roles_for(demo.id, admin_project.id) == []
    assert re.fullmatch(r"[0-9a-f]{32}", admin.id) and re.fullmatch(r"[0-9a-f]{32}", admin_project.id)


async def test_bootstrap_twice_changes_nothing(identity) -> None:
    before = await snapshot(identity)
    await identity.bootstrap(admin_password="admin-secret", demo_password="demo-secret")
    assert await snapshot(identity) == before
    token = await admin_token(identity)
    assert token.roles == ["admin", "member", "reader"]


async def test_bootstrap_restores_a_changed_admin_password_and_revokes_its_tokens(identity) -> None:
    admin = await identity.find_user("admin")
    old_token = await admin_token(identity)
    await identity.update_user(admin.id, enabled=False)
    await identity.bootstrap(admin_password="rotated", demo_password="demo-secret")
    assert (await identity.get_user(admin.id)).enabled
    with pytest.raises(errors.Unauthorized):
        await admin_token(identity)
    with pytest.raises(errors.Unauthorized):
        await identity.validate_token(old_token.id)
    token = await identity.authenticate(password="rotated", user_id=admin.id)
    assert token.user_id == admin.id


# -- passwords ------------------------------------------------------------------


async def test_stored_hash_is_argon2_and_never_the_password(database) -> None:
    identity = make_identity(database, password_hasher=None)  # the library's own (costly) defaults
    await identity.create_domain(name="Default", id="default")
    user = await identity.create_user(name="alice", password="correct horse")
    async with identity.store.begin() as conn:
        stored = await repos.users.get(conn, user.id)
    assert stored.password_hash.startswith("$argon2id$")
    assert "m=65536,t=3,p=4" in stored.password_hash
    assert "correct horse" not in stored.password_hash
    assert "correct horse" not in repr(stored) and stored.password_hash not in repr(stored)


async def test_passwords_hashed_early_are_the_hashes_later_asked_for() -> None:
    # `tether serve` starts hashing the seed passwords on a thread before it imports the server.
    passwords_module.hash_early("first", "second", "first", hasher=CHEAP)
    passwords = Passwords(CHEAP)
    first, second = await passwords.hash("first"), await passwords.hash("second")
    assert not passwords_module._early  # both were taken from the early thread, none computed again
    assert await passwords.verify(first, "first") and await passwords.verify(second, "second")
    assert not await passwords.verify(first, "second")


# -- authentication -------------------------------------------------------------


async def test_password_auth_by_name_and_domain_name_scopes_to_the_project(identity) -> None:
    token = await admin_token(identity)
    admin_project = await identity.find_project("admin")
    assert token.project_id == admin_project.id and token.project_name == "admin"
    assert token.roles == ["admin", "member", "reader"]
    assert not token.system
    assert token.issued_at == START and token.expires_at == START + 3600
    assert re.fullmatch(r"[0-9a-f]{64}", token.id)
    assert re.fullmatch(r"[A-Za-z0-9_-]{22}", token.audit_id)
    assert (await identity.validate_token(token.id)).user_id == token.user_id


async def test_password_auth_by_ids_and_domain_ids(identity) -> None:
    demo = await identity.find_user("demo")
    demo_project = await identity.find_project("demo")
    by_id = await identity.authenticate(password="demo-secret", user_id=demo.id, project_id=demo_project.id)
    by_domain_id = await identity.authenticate(password="demo-secret", user_name="demo", user_domain_id="default",
                                               project_name="demo", project_domain_id="default")
    for token in (by_id, by_domain_id):
        assert (token.user_id, token.project_id) == (demo.id, demo_project.id)
        assert token.roles == ["member", "reader"]
    assert by_id.id != by_domain_id.id and by_id.audit_id != by_domain_id.audit_id


async def test_system_scope_is_for_admins_of_the_admin_project_only(identity) -> None:
    token = await admin_token(identity, system=True)
    assert token.system and token.project_id is None
    assert token.roles == ["admin", "member", "reader"]
    with pytest.raises(errors.Unauthorized):
        await identity.authenticate(password="demo-secret", user_name="demo", user_domain_name="Default",
                                    system=True)


async def test_no_scope_gives_an_unscoped_token(identity) -> None:
    token = await identity.authenticate(password="demo-secret", user_name="demo", user_domain_name="Default")
    assert token.project_id is None and not token.system and token.roles == []
    assert token.is_unscoped
    assert (await identity.validate_token(token.id)).is_unscoped


async def _disable_demo(identity: IdentityService) -> None:
    await identity.update_user((await identity.find_user("demo")).id, enabled=False)


async def _disable_demo_project(identity: IdentityService) -> None:
    await identity.update_project((await identity.find_project("demo")).id, enabled=False)


async def _passwordless_user(identity: IdentityService) -> None:
    user = await identity.create_user(name="nopass")
    await identity.assign_role(user_id=user.id, project_id=(await identity.find_project("demo")).id,
                               role_id=(await identity.find_role("member")).id)


DEMO_ON_DEMO = {"user_name": "demo", "user_domain_name": "Default", "project_name": "demo",
                "project_domain_name": "Default"}

WRONG_CREDENTIALS = {
    "wrong password": (None, {**DEMO_ON_DEMO, "password": "nope"}),
    "empty password": (None, {**DEMO_ON_DEMO, "password": ""}),
    "unknown user name": (None, {**DEMO_ON_DEMO, "user_name": "mallory", "password": "demo-secret"}),
    "unknown user id": (None, {"user_id": "f" * 32, "password": "demo-secret"}),
    "unknown user domain": (None, {**DEMO_ON_DEMO, "user_domain_name": "Elsewhere", "password": "demo-secret"}),
    "user in another domain id": (None, {**DEMO_ON_DEMO, "user_domain_name": None, "user_domain_id": "x",
                                         "password": "demo-secret"}),
    "disabled user": (_disable_demo, {**DEMO_ON_DEMO, "password": "demo-secret"}),
    "no role on the project": (None, {**DEMO_ON_DEMO, "project_name": "admin", "password": "demo-secret"}),
    "unknown project": (None, {**DEMO_ON_DEMO, "project_name": "nowhere", "password": "demo-secret"}),
    "unknown project id": (None, {"user_name": "demo", "user_domain_name": "Default", "project_id": "0" * 32,
                                  "password": "demo-secret"}),
    "disabled project": (_disable_demo_project, {**DEMO_ON_DEMO, "password": "demo-secret"}),
    "user without a password": (_passwordless_user, {**DEMO_ON_DEMO, "user_name": "nopass", "password": ""}),
}


@pytest.mark.parametrize("case", list(WRONG_CREDENTIALS))
async def test_every_wrong_credential_is_the_same_401(identity, case: str) -> None:
    prepare, credentials = WRONG_CREDENTIALS[case]
    if prepare is not None:
        await prepare(identity)
    async with identity.store.begin() as conn:
        tokens_before = await repos.tokens.count(conn)
    with pytest.raises(errors.Unauthorized) as caught:
        await identity.authenticate(**credentials)
    assert caught.value.status == 401
    assert str(caught.value) == UNAUTHORIZED
    async with identity.store.begin() as conn:
        assert await repos.tokens.count(conn) == tokens_before


@pytest.mark.parametrize(
    ("credentials", "expected"),
    [
        ({"password": "x"}, "Expecting to find id or name in user."),
        ({"password": "x", "user_name": "demo"}, "Expecting to find domain in user."),
        ({"password": "x", "user_id": "u", "project_name": "demo"}, "Expecting to find domain in project."),
        ({"password": "x", "user_id": "u", "project_id": "p", "system": True},
         "Expecting to find system, project, domain, OS-TRUST:trust or unscoped in scope."),
    ],
)
async def test_malformed_auth_requests_are_400_in_keystone_words(identity, credentials, expected) -> None:
    with pytest.raises(errors.ValidationError) as caught:
        await identity.authenticate(**credentials)
    assert caught.value.status == 400
    assert str(caught.value).startswith(expected)


# -- expiry and revocation --------------------------------------------------------


async def test_tokens_expire_after_the_ttl(identity, clock) -> None:
    token = await admin_token(identity)
    clock.advance_to(START + 3599)
    assert (await identity.validate_token(token.id)).id == token.id  # cached now; expiry must still bite
    clock.advance_to(START + 3600)
    with pytest.raises(errors.Unauthorized):
        await identity.validate_token(token.id)
    with pytest.raises(errors.TokenNotFound):
        await identity.revoke_token(token.id)


async def test_token_ttl_is_configurable(database, clock) -> None:
    identity = make_identity(database, clock, token_ttl=60)
    await identity.bootstrap(admin_password="admin-secret", demo_password="demo-secret")
    token = await admin_token(identity)
    assert token.expires_at - token.issued_at == 60
    clock.advance_to(START + 61)
    with pytest.raises(errors.Unauthorized):
        await identity.validate_token(token.id)
    with pytest.raises(ValueError):
        make_identity(database, clock, token_ttl=0)


async def test_revocation_takes_effect_at_once_in_this_process(identity) -> None:
    token = await admin_token(identity)
    other = await admin_token(identity)
    await identity.validate_token(token.id)  # now in the cache
    await identity.revoke_token(token.id)
    with pytest.raises(errors.Unauthorized):
        await identity.validate_token(token.id)
    with pytest.raises(errors.TokenNotFound):
        await identity.revoke_token(token.id)
    assert (await identity.validate_token(other.id)).id == other.id


async def test_another_process_sees_a_revocation_once_its_cache_entry_ages_out(database, clock) -> None:
    first = make_identity(database, clock, token_cache_seconds=30)
    await first.bootstrap(admin_password="admin-secret", demo_password="demo-secret")
    second_clock = VirtualClock(START)
    second = make_identity(database, second_clock, token_cache_seconds=30)
    token = await admin_token(first)
    await second.validate_token(token.id)
    await first.revoke_token(token.id)
    assert (await second.validate_token(token.id)).id == token.id  # still within its cache bound
    second_clock.advance_to(START + 30)
    with pytest.raises(errors.Unauthorized):
        await second.validate_token(token.id)


async def test_unknown_tokens_are_unauthorized(identity) -> None:
    for token_id in ("", "nonsense", "0" * 64):
        with pytest.raises(errors.Unauthorized):
            await identity.validate_token(token_id)


async def test_the_store_keeps_a_digest_not_the_token(identity) -> None:
    token = await admin_token(identity)
    async with identity.store.begin() as conn:
        assert await repos.tokens.get(conn, token.id) is None
        stored = await repos.tokens.get(conn, token_digest(token.id))
    assert stored is not None and stored.user_id == token.user_id and stored.roles == token.roles


async def test_disabling_a_user_or_taking_their_role_revokes_their_tokens(identity) -> None:
    demo = await identity.find_user("demo")
    demo_project = await identity.find_project("demo")
    member = await identity.find_role("member")
    token = await identity.authenticate(password="demo-secret", **DEMO_ON_DEMO)
    await identity.validate_token(token.id)
    await identity.unassign_role(user_id=demo.id, project_id=demo_project.id, role_id=member.id)
    with pytest.raises(errors.Unauthorized):
        await identity.validate_token(token.id)

    admin = await identity.find_user("admin")
    admin_scoped = await admin_token(identity)
    await identity.validate_token(admin_scoped.id)
    await identity.update_user(admin.id, enabled=False)
    with pytest.raises(errors.Unauthorized):
        await identity.validate_token(admin_scoped.id)


async def test_purge_drops_only_expired_tokens(identity, clock) -> None:
    old = await admin_token(identity)
    clock.advance_to(START + 3000)
    fresh = await admin_token(identity)
    clock.advance_to(START + 3600)
    assert await identity.purge_expired_tokens() == 1
    async with identity.store.begin() as conn:
        assert await repos.tokens.get(conn, token_digest(old.id)) is None
    assert (await identity.validate_token(fresh.id)).id == fresh.id


# -- accounts -----------------------------------------------------------------------


async def test_duplicate_names_conflict_in_keystone_words_and_change_nothing(identity) -> None:
    before = await snapshot(identity)
    with pytest.raises(errors.Conflict) as caught:
        await identity.create_project(name="demo")
    assert caught.value.status == 409
    assert str(caught.value) == (
        "Conflict occurred attempting to store project - Duplicate entry found with name demo at domain ID default."
    )
    with pytest.raises(errors.Conflict, match="store user - Duplicate entry found with name admin"):
        await identity.create_user(name="admin", password="x")
    with pytest.raises(errors.Conflict, match=re.escape("store role - Duplicate entry found with name reader.")):
        await identity.create_role(name="reader")
    with pytest.raises(errors.ValidationError):
        await identity.create_project(name="")
    with pytest.raises(errors.DomainNotFound):
        await identity.create_project(name="lost", domain_id="nowhere")
    assert await snapshot(identity) == before


async def test_names_are_unique_per_domain_and_found_within_their_domain(identity) -> None:
    other = await identity.create_domain(name="Other")
    here = await identity.create_project(name="web")
    there = await identity.create_project(name="web", domain_id=other.id)
    assert here.id != there.id
    assert (await identity.find_project("web", domain_id=other.id)).id == there.id
    assert (await identity.find_project("web")).id == here.id
    with pytest.raises(errors.ProjectNotFound, match=re.escape("Could not find project: web.")):
        await identity.find_project("web", domain_id="default-2")
    user = await identity.create_user(name="carol", password="pw", domain_id=other.id)
    assert (await identity.find_user("carol", domain_id=other.id)).id == user.id
    with pytest.raises(errors.UserNotFound, match=re.escape("Could not find user: carol.")):
        await identity.find_user("carol")
    assert [u.name for u in await identity.list_users(domain_id=other.id)] == ["carol"]
    assert await identity.get_project(there.id) == there


async def test_role_assignment_grants_access_and_unassignment_takes_it_away(identity) -> None:
    project = await identity.create_project(name="lab")
    user = await identity.create_user(name="dave", password="pw")
    reader = await identity.find_role("reader")
    await identity.assign_role(user_id=user.id, project_id=project.id, role_id=reader.id)
    await identity.assign_role(user_id=user.id, project_id=project.id, role_id=reader.id)  # idempotent
    assert len(await identity.list_role_assignments(user_id=user.id)) == 1
    token = await identity.authenticate(password="pw", user_id=user.id, project_id=project.id)
    assert token.roles == ["reader"]
    await identity.unassign_role(user_id=user.id, project_id=project.id, role_id=reader.id)
    with pytest.raises(errors.RoleAssignmentNotFound):
        await identity.unassign_role(user_id=user.id, project_id=project.id, role_id=reader.id)
    with pytest.raises(errors.Unauthorized):
        await identity.authenticate(password="pw", user_id=user.id, project_id=project.id)
    with pytest.raises(errors.RoleNotFound):
        await identity.assign_role(user_id=user.id, project_id=project.id, role_id="missing")
    assert await identity.list_role_assignments(user_id=user.id) == []


async def test_context_for_carries_the_token_holder(identity) -> None:
    token = await admin_token(identity)
    ctx = identity.context_for(token, request_id="req-1")
    assert (ctx.user_id, ctx.project_id, ctx.request_id) == (token.user_id, token.project_id, "req-1")
    assert ctx.roles == {"admin", "member", "reader"} and ctx.is_admin and not ctx.system
    demo = await identity.authenticate(password="demo-secret", **DEMO_ON_DEMO)
    demo_ctx = identity.context_for(demo)
    assert not demo_ctx.is_admin and demo_ctx.can_write and demo_ctx.request_id.startswith("req-")
    assert identity.context_for(await admin_token(identity, system=True)).system


# -- catalog and token body --------------------------------------------------------------

EXPECTED_URLS = {
    "identity": f"{BASE}/identity",
    "compute": f"{BASE}/compute/v2.1",
    "network": f"{BASE}/network",
    "image": f"{BASE}/image",
    "baremetal": f"{BASE}/baremetal",
    "orchestration": f"{BASE}/orchestration/v1/p123",
}


def build_catalog(base_url: str, project_id: str | None) -> list[dict[str, Any]]:
    """The catalog of Tether's own services at ``base_url``, as a fresh cloud registers them."""
    return catalogs.build_catalog(catalogs.own_services(), catalogs.own_endpoints(base_url), project_id)


def test_catalog_lists_the_six_services_it_serves_with_region_and_interface() -> None:
    catalog = build_catalog(BASE + "/", "p123")
    assert {entry["type"]: entry["endpoints"][0]["url"] for entry in catalog} == EXPECTED_URLS
    for entry in catalog:
        assert entry["id"] and entry["name"]
        assert sorted(ep["interface"] for ep in entry["endpoints"]) == ["admin", "internal", "public"]
        for endpoint in entry["endpoints"]:
            assert endpoint["region"] == "RegionOne" and endpoint["region_id"] == "RegionOne"
            assert endpoint["url"] == EXPECTED_URLS[entry["type"]] and endpoint["id"]
    ids = [entry["id"] for entry in catalog] + [ep["id"] for entry in catalog for ep in entry["endpoints"]]
    assert len(set(ids)) == len(ids)


def test_catalog_is_a_pure_function_with_stable_ids() -> None:
    assert build_catalog(BASE, "p123") == build_catalog(BASE, "p123")
    elsewhere = build_catalog("https://cloud.example", "p999")
    assert [e["id"] for e in elsewhere] == [e["id"] for e in build_catalog(BASE, "p123")]
    assert elsewhere[-1]["endpoints"][0]["url"] == "https://cloud.example/orchestration/v1/p999"
    # heat's URL holds the project (heatclient uses it as it is), so a token without one does not list it
    assert [e["type"] for e in build_catalog(BASE, None)] == [
        "identity", "compute", "network", "image", "baremetal",
    ]


ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")


async def test_token_body_for_a_project_token(identity) -> None:
    token = await admin_token(identity)
    await identity.register_own_endpoints(BASE)
    catalog = await identity.catalog(token.project_id)
    body = token_body(token, catalog)["token"]
    admin = await identity.find_user("admin")
    assert body["issued_at"] == "2026-01-01T00:00:00.000000Z"
    assert body["expires_at"] == "2026-01-01T01:00:00.000000Z"
    assert ISO.match(body["issued_at"]) and ISO.match(body["expires_at"])
    assert body["methods"] == ["password"]
    assert body["audit_ids"] == [token.audit_id]
    assert body["user"] == {"id": admin.id, "name": "admin", "domain": {"id": "default", "name": "Default"},
                            "password_expires_at": None}
    assert body["project"] == {"id": token.project_id, "name": "admin",
                               "domain": {"id": "default", "name": "Default"}}
    role_ids = {r.name: r.id for r in await identity.list_roles()}
    assert body["roles"] == [{"id": role_ids[n], "name": n} for n in ("admin", "member", "reader")]
    assert body["is_domain"] is False
    assert body["catalog"] == catalog and "system" not in body
    assert identity.token_body(token, None)["token"].keys() == body.keys() - {"catalog"}


async def test_token_body_for_system_and_unscoped_tokens(identity) -> None:
    system = token_body(await admin_token(identity, system=True), build_catalog(BASE, None))["token"]
    assert system["system"] == {"all": True}
    assert "project" not in system and "is_domain" not in system
    assert [r["name"] for r in system["roles"]] == ["admin", "member", "reader"]
    assert [e["type"] for e in system["catalog"]][-1] == "baremetal"

    unscoped = token_body(await admin_token(identity, project_name=None), build_catalog(BASE, None))["token"]
    assert not {"project", "system", "roles", "catalog", "is_domain"} & unscoped.keys()
    assert unscoped["user"]["name"] == "admin"


def test_a_read_that_raced_a_revocation_is_not_cached() -> None:
    cache = TokenCache(ttl=30)
    token = Token(id="t1", user_id="u", project_id="p", system=False, expires_at=START + 3600)
    generation = cache.generation  # a validation starts reading the store...
    cache.forget(lambda t: t.user_id == "u")  # ...a revocation lands meanwhile...
    cache.put(token, START, generation)  # ...so what the read saw must not be trusted
    assert cache.get("t1", START) is None
    cache.put(token, START, cache.generation)
    assert cache.get("t1", START + 29) is token
    assert cache.get("t1", START + 30) is None
