"""Reading instances the way compute's operations need them."""

from __future__ import annotations

from dataclasses import dataclass

from tether.domain.compute import Instance
from tether.domain.errors import compute as ce
from tether.services.context import RequestContext
from tether.store import repos
from tether.store.database import Store, StoreConnection


@dataclass(eq=False)
class Instances:
    store: Store

    async def live(self, uuid: str) -> Instance | None:
        """The instance unless it is gone (internal: no caller to check)."""
        async with self.store.begin() as conn:
            instance = await repos.instances.get(conn, uuid)
        if instance is None or instance.deleted:
            return None
        return instance


async def visible_instance(conn: StoreConnection, ctx: RequestContext, uuid: str) -> Instance:
    """The instance if the caller may see it; nova's 404 otherwise."""
    instance = await repos.instances.get(conn, uuid)
    if instance is None or instance.deleted or not ctx.owns(instance.project_id):
        raise ce.InstanceNotFound(instance_id=uuid)
    return instance


def acting_for(instance: Instance) -> RequestContext:
    """Compute acting on its own behalf, within the instance's project."""
    return RequestContext.internal(project_id=instance.project_id)
