"""Domain-specific configuration, stored per domain; the rules are keystone's, in ``domain.domain_config``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tether.domain import domain_config as rules
from tether.domain.errors import identity as errors
from tether.domain.identity import DomainConfig
from tether.store import repos
from tether.store.database import Store, StoreConnection


async def _require_domain(conn: StoreConnection, domain_id: str) -> None:
    if await repos.domains.get(conn, domain_id) is None:
        raise errors.DomainNotFound(domain_id=domain_id)


async def _current(conn: StoreConnection, domain_id: str) -> DomainConfig:
    return await repos.domain_configs.get(conn, domain_id) or DomainConfig(domain_id=domain_id)


async def _store(conn: StoreConnection, domain_id: str, config: rules.Config, existed: bool) -> None:
    options, sensitive = rules.split(config)
    if not config:
        await repos.domain_configs.delete(conn, domain_id)
    elif existed:
        await repos.domain_configs.update(conn, domain_id, options=options, sensitive=sensitive)
    else:
        await repos.domain_configs.add(conn, DomainConfig(domain_id, options, sensitive))


def _whole(config: DomainConfig) -> rules.Config:
    return rules.merged(config.options, config.sensitive)


@dataclass(eq=False)
class DomainConfigs:
    store: Store

    async def create(self, domain_id: str, config: Any) -> tuple[rules.Config, bool]:
        """Replace the domain's config with ``config``: (what reads back, whether there was none before)."""
        rules.check_config(config)
        async with self.store.begin() as conn:
            await _require_domain(conn, domain_id)
            existed = await repos.domain_configs.get(conn, domain_id) is not None
            if existed:
                await repos.domain_configs.delete(conn, domain_id)
            await _store(conn, domain_id, config, existed=False)
        return rules.split(config)[0], not existed

    async def get(self, domain_id: str, group: str | None = None, option: str | None = None) -> dict[str, Any]:
        """A missing domain has no config: keystone's 404 names the config, not to say which domains exist."""
        async with self.store.begin() as conn:
            current = await _current(conn, domain_id)
        return rules.read(domain_id, current.options, group, option)

    async def update(self, domain_id: str, body: Any, group: str | None = None,
                     option: str | None = None) -> rules.Config:
        async with self.store.begin() as conn:
            await _require_domain(conn, domain_id)
            stored = await repos.domain_configs.get(conn, domain_id)
            current = _whole(stored) if stored else {}
            config = rules.update(domain_id, current, body, group, option)
            await _store(conn, domain_id, config, existed=stored is not None)
        return rules.read(domain_id, rules.split(config)[0])

    async def delete(self, domain_id: str, group: str | None = None, option: str | None = None) -> None:
        async with self.store.begin() as conn:
            await _require_domain(conn, domain_id)
            stored = await repos.domain_configs.get(conn, domain_id)
            config = rules.delete(domain_id, _whole(stored) if stored else {}, group, option)
            if stored is not None:
                await _store(conn, domain_id, config, existed=True)
