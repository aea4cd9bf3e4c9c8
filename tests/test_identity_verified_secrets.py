"""The verified-credential cache: a login argon2 accepted a moment ago is not hashed again, and nothing else changes.

The hasher here counts its verifications (argon2 itself, with its cheapest parameters): that count is
how a test tells a login that skipped the hash from one that paid it. Every right that goes away (a new
password, disabling, lockout, deletion, the credential's deletion) must still refuse a login that the
cache remembers, and every failure must still cost one hash, as it did without the cache.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from argon2 import PasswordHasher, profiles

from tether.domain.errors import identity as errors
from tether.domain.identity import Lockout
from tether.runtime.clock import VirtualClock
from tether.runtime.runtime import Runtime
from tether.services.identity.service import IdentityService
from tether.services.identity.verified_secrets import VerifiedSecrets
from tether.store.database import Store

START = 1_767_225_600.0


class CountingHasher(PasswordHasher):
    """argon2 (cheapest parameters), counting how many times a hash was checked."""

    def __init__(self) -> None:
        cheapest = profiles.CHEAPEST
        super().__init__(time_cost=cheapest.time_cost, memory_cost=cheapest.memory_cost,
                         parallelism=cheapest.parallelism, hash_len=cheapest.hash_len, salt_len=cheapest.salt_len,
                         type=cheapest.type)
        self.verifications = 0

    def verify(self, hash: str | bytes, password: str | bytes) -> bool:
        self.verifications += 1
        return super().verify(hash, password)


@pytest.fixture
def clock() -> VirtualClock:
    return VirtualClock(START)


def advance(clock: VirtualClock, seconds: float) -> None:
    clock.advance_to(clock.now() + seconds)


@pytest.fixture
def hasher() -> CountingHasher:
    return CountingHasher()


async def make(database: Any, clock: VirtualClock, hasher: CountingHasher, **options: Any) -> IdentityService:
    runtime = Runtime(clock=clock)
    identity = IdentityService(Store(database, runtime), runtime, random.Random(7), password_hasher=hasher,
                               **options)
    await identity.bootstrap(admin_password="admin-secret", demo_password="demo-secret")
    return identity


@pytest.fixture
async def identity(database, clock, hasher) -> IdentityService:
    return await make(database, clock, hasher, credential_cache_seconds=60.0)


async def service_user(identity: IdentityService, name: str = "ironic", password: str = "ironic-secret") -> str:
    user = await identity.create_user(name=name, password=password)
    project = await identity.find_project("service")
    await identity.assign_role(role_id=(await identity.find_role("admin")).id, user_id=user.id,
                               project_id=project.id)
    return user.id


async def login(identity: IdentityService, password: str = "ironic-secret", name: str = "ironic"):
    return await identity.authenticate(password=password, user_name=name, user_domain_name="Default",
                                       project_name="service", project_domain_name="Default")


async def test_a_login_argon2_accepted_a_moment_ago_is_not_hashed_again(identity, hasher, clock) -> None:
    await service_user(identity)
    before = hasher.verifications
    first = await login(identity)
    assert hasher.verifications == before + 1
    for _ in range(5):
        advance(clock, 5)
        again = await login(identity)
        assert again.id != first.id and again.project_name == "service" and "admin" in again.roles
    assert hasher.verifications == before + 1
    advance(clock, 60)  # the entry is trusted for 60 s from the hash that made it, however often it is used
    await login(identity)
    assert hasher.verifications == before + 2


async def test_every_failure_still_costs_one_hash(identity, hasher) -> None:
    await service_user(identity)
    await login(identity)
    for attempt in (lambda: login(identity, password="wrong"),
                    lambda: login(identity, name="nobody-by-this-name"),
                    lambda: identity.authenticate(password="ironic-secret", user_name="ironic",
                                                  user_domain_name="Default", project_name="demo",
                                                  project_domain_name="Default")):
        before = hasher.verifications
        with pytest.raises(errors.Unauthorized):
            await attempt()
        assert hasher.verifications == before + 1


async def test_a_remembered_password_stops_working_when_it_is_changed(identity, hasher) -> None:
    user_id = await service_user(identity)
    await login(identity)
    await identity.update_user(user_id, password="new-secret")
    with pytest.raises(errors.Unauthorized):
        await login(identity)
    assert (await login(identity, password="new-secret")).user_id == user_id


async def test_a_remembered_password_stops_working_when_the_user_changes_it_themselves(identity) -> None:
    user_id = await service_user(identity)
    await login(identity)
    await identity.accounts.change_password(user_id, original_password="ironic-secret", password="new-secret")
    with pytest.raises(errors.Unauthorized):
        await login(identity)


async def test_another_process_with_the_old_password_remembered_refuses_it_after_a_change(
        database, clock, hasher) -> None:
    """Two processes on one database: a change made by one is seen by the other's very next login."""
    here = await make(database, clock, hasher)
    there = await make(database, clock, hasher)
    user_id = await service_user(here)
    await login(there)
    await here.update_user(user_id, password="new-secret")
    before = hasher.verifications
    with pytest.raises(errors.Unauthorized):
        await login(there)
    assert hasher.verifications == before + 1
    await here.update_user(user_id, enabled=False)
    with pytest.raises(errors.Unauthorized):
        await login(there, password="new-secret")


async def test_a_remembered_password_stops_working_when_the_user_is_disabled_or_deleted(identity) -> None:
    user_id = await service_user(identity)
    await login(identity)
    await identity.update_user(user_id, enabled=False)
    with pytest.raises(errors.Unauthorized):
        await login(identity)
    await identity.update_user(user_id, enabled=True)
    await login(identity)
    await identity.accounts.delete_user(user_id)
    with pytest.raises(errors.Unauthorized):
        await login(identity)


async def test_a_remembered_password_stops_working_when_the_domain_is_disabled(identity) -> None:
    domain = await identity.create_domain(name="site")
    user = await identity.create_user(name="svc", password="svc-secret", domain_id=domain.id)
    await identity.authenticate(password="svc-secret", user_id=user.id)
    await identity.accounts.update_domain(domain.id, enabled=False)
    with pytest.raises(errors.Unauthorized):
        await identity.authenticate(password="svc-secret", user_id=user.id)


async def test_a_remembered_password_does_not_open_a_locked_account_nor_skip_its_hash(
        database, clock, hasher) -> None:
    identity = await make(database, clock, hasher, lockout=Lockout(attempts=3, seconds=300))
    user_id = await service_user(identity)
    await login(identity)
    for _ in range(3):
        with pytest.raises(errors.Unauthorized):
            await login(identity, password="wrong")
    assert user_id not in {entry.user_id for entry in identity.verified_secrets._entries.values()}
    before = hasher.verifications
    with pytest.raises(errors.AccountLocked):
        await login(identity)
    assert hasher.verifications == before + 1
    advance(clock, 301)
    assert (await login(identity)).user_id == user_id


async def test_losing_the_role_refuses_the_scope_even_with_the_password_remembered(identity) -> None:
    user_id = await service_user(identity)
    await login(identity)
    project = await identity.find_project("service")
    await identity.unassign_role(role_id=(await identity.find_role("admin")).id, user_id=user_id,
                                 project_id=project.id)
    with pytest.raises(errors.Unauthorized):
        await login(identity)


async def test_an_application_credential_secret_is_remembered_and_forgotten_with_it(identity, hasher) -> None:
    user_id = await service_user(identity)
    project = await identity.find_project("service")
    issued = await identity.application_credentials.create(user_id=user_id, project_id=project.id, name="ironic")
    credentials = identity.application_credentials
    before = hasher.verifications
    first = await credentials.authenticate(id=issued.credential.id, secret=issued.secret)
    second = await credentials.authenticate(id=issued.credential.id, secret=issued.secret)
    assert hasher.verifications == before + 1
    assert first.application_credential_id == second.application_credential_id == issued.credential.id
    with pytest.raises(errors.Unauthorized):
        await credentials.authenticate(id=issued.credential.id, secret="wrong")
    assert hasher.verifications == before + 2
    await credentials.delete(user_id, issued.credential.id)
    with pytest.raises(errors.Unauthorized):
        await credentials.authenticate(id=issued.credential.id, secret=issued.secret)


async def test_a_cache_of_zero_seconds_hashes_every_login(database, clock, hasher) -> None:
    identity = await make(database, clock, hasher, credential_cache_seconds=0)
    await service_user(identity)
    before = hasher.verifications
    for _ in range(3):
        await login(identity)
    assert hasher.verifications == before + 3


def test_the_cache_holds_no_password_and_keeps_to_its_bound() -> None:
    cache = VerifiedSecrets(ttl=60, max_entries=2)
    digests = {}
    for index in range(3):
        digests[index] = cache.digest(f"password:u{index}", "$argon2id$stored", "the-password")
        cache.remember(f"password:u{index}", f"u{index}", digests[index], START)
    assert len(cache) == 2 and not cache.recalls("password:u0", digests[0], START)
    assert cache.recalls("password:u2", digests[2], START)
    assert b"the-password" not in digests[2] and len(digests[2]) == 32
    # the stored hash is part of what is remembered: a new password is never the old entry
    assert cache.digest("password:u2", "$argon2id$other", "the-password") != digests[2]
    # a second process has its own key: its entries are nothing to this one
    assert VerifiedSecrets().digest("password:u2", "$argon2id$stored", "the-password") != digests[2]
    cache.forget_user("u2")
    assert not cache.recalls("password:u2", digests[2], START)
