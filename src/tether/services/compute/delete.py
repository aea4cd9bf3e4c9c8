"""Deleting an instance: release everything it holds (``Release``), then mark it deleted."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from tether.domain import compute_states as vm
from tether.domain.compute import Instance
from tether.runtime.runtime import Runtime
from tether.services.compute import instance_state, records
from tether.services.compute.instances import Instances
from tether.services.compute.release import Release
from tether.store import intents, repos
from tether.store.database import Store

# How a delete releases the instance's resources; emulation supplies upstream's order.
ReleaseForDelete = Callable[[Release, Instance], Awaitable[None]]


async def release_for_delete(release: Release, instance: Instance) -> None:
    await release.rt.checkpoint("compute.delete.before_unplug")
    await release.release_all(instance)


@dataclass(eq=False)
class Delete:
    store: Store
    rt: Runtime
    instances: Instances
    release: Release
    release_step: ReleaseForDelete = release_for_delete

    async def run(self, uuid: str, request_id: str) -> None:
        async with self.rt.locks.hold("instance", uuid):
            instance = await self.instances.live(uuid)
            if instance is None:
                async with self.store.begin() as conn:
                    await intents.forget(conn, f"delete:{uuid}")
                return
            try:
                await self.release_step(self.release, instance)
            except Exception as error:
                await self._fail(instance, request_id, error)
                return
            await self._mark_deleted(instance, request_id)

    async def _mark_deleted(self, instance: Instance, request_id: str) -> None:
        now = self.rt.now()
        async with self.store.begin() as conn:
            # Finished before the host is cleared: the event keeps the host the delete ran on.
            await records.finish_action(conn, request_id, instance.uuid, now, instance=instance)
            await instance_state.move(conn, instance, "deleted", now, power_state=vm.NOSTATE, deleted=True,
                                      deleted_at=now, host=None, node=None, deadline=None)
            await repos.instance_vifs.delete_where(conn, instance_uuid=instance.uuid)
            await intents.forget(conn, f"delete:{instance.uuid}")
            await intents.forget(conn, f"build:{instance.uuid}")
        self.rt.note(f"server {instance.name} deleted")
        self.rt.notify(("instance", instance.uuid))

    async def _fail(self, instance: Instance, request_id: str, error: Exception) -> None:
        self.rt.note(f"delete of {instance.name} failed: {error}")
        now = self.rt.now()
        async with self.store.begin() as conn:
            await instance_state.move(conn, instance, "delete_failed", now, deadline=None)
            await records.record_fault(conn, instance.uuid, error, now)
            await records.finish_action(conn, request_id, instance.uuid, now, error=error)
            await intents.forget(conn, f"delete:{instance.uuid}")
        self.rt.notify(("instance", instance.uuid))
