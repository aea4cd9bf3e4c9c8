"""The nova-compute service of each hypervisor: listed, disabled and enabled, forced down (os-services).

A disabled or forced-down service takes no new servers: the scheduler
skips its hypervisor (``domain.placement.fits``).
"""

from __future__ import annotations

from dataclasses import dataclass

from tether.domain.compute import Hypervisor
from tether.domain.errors import compute as ce
from tether.services.context import RequestContext
from tether.store import repos
from tether.store.database import Store


@dataclass(eq=False)
class ComputeServices:
    store: Store

    async def compute_services(self, ctx: RequestContext) -> list[Hypervisor]:
        if not ctx.is_admin:
            raise ce.ComputeForbidden(action="os_compute_api:os-services:list")
        async with self.store.begin() as conn:
            return await repos.hypervisors.find(conn, order_by=("id",))

    async def update_compute_service(self, ctx: RequestContext, hostname: str, *, disabled: bool | None = None,
                                     disabled_reason: str | None = None,
                                     forced_down: bool | None = None) -> Hypervisor:
        """Change the service on ``hostname``; ``disabled`` False clears the reason, as nova does."""
        if not ctx.is_admin:
            raise ce.ComputeForbidden(action="os_compute_api:os-services:update")
        values: dict[str, object] = {}
        if disabled is not None:
            values["status"] = "disabled" if disabled else "enabled"
            values["disabled_reason"] = disabled_reason if disabled else None
        if forced_down is not None:
            values["forced_down"] = forced_down
            values["state"] = "down" if forced_down else "up"
        async with self.store.begin() as conn:
            hypervisor = await repos.hypervisors.first(conn, hostname=hostname)
            if hypervisor is None:
                raise ce.ComputeNotFound(reason=f"Could not find binary nova-compute on host {hostname}.")
            await repos.hypervisors.update(conn, hypervisor.id, **values)
            return await repos.hypervisors.get(conn, hypervisor.id)  # type: ignore[return-value]
