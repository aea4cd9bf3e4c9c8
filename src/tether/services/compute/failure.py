"""Ending an instance in ERROR: release everything it holds first (rules 2 and 3)."""

from __future__ import annotations

from dataclasses import dataclass

from tether.domain import compute_states as vm
from tether.runtime.runtime import Runtime
from tether.services.compute import instance_state, records
from tether.services.compute.instances import Instances
from tether.services.compute.release import Release
from tether.store import intents, repos
from tether.store.database import Store


@dataclass(eq=False)
class InstanceFailure:
    store: Store
    rt: Runtime
    instances: Instances
    release: Release

    async def fail(self, uuid: str, request_id: str, error: BaseException) -> None:
        """Release what the instance holds, then ERROR with the fault. A delete under way stays under way."""
        self.rt.note(f"build of {uuid} failed: {error}")
        await self.rt.checkpoint("compute.build.before_cleanup")
        instance = await self.instances.live(uuid)
        if instance is None:
            return
        await self.release.release_all(instance)
        now = self.rt.now()
        async with self.store.begin() as conn:
            current = await repos.instances.get(conn, uuid)
            if current is not None:
                await instance_state.move(conn, current, "fail", now, power_state=vm.NOSTATE, host=None,
                                          node=None, deadline=None)
            await records.record_fault(conn, uuid, error, now)
            await records.finish_action(conn, request_id, uuid, now, error=error)
            await intents.forget(conn, f"build:{uuid}")
        self.rt.notify(("instance", uuid))
