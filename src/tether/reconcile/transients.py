"""Rule 3: nothing stays in a transient state past its deadline."""

from __future__ import annotations

from tether.domain import baremetal_states as bms
from tether.domain.invariants import Snapshot, Violation
from tether.reconcile.base import Reconciler
from tether.reconcile.queue import Key


class StuckTransients(Reconciler):
    invariant = "stuck-transient"
    kinds = ("instance", "node")

    async def mend(self, violation: Violation) -> bool:
        if "instance" in violation.resources:
            return await self.cloud.compute.expire_transient(violation.resources["instance"])
        return await self.cloud.baremetal.expire_transient(violation.resources["node"])

    def next_look(self, snapshot: Snapshot, key: Key) -> float | None:
        # Come back when the deadline passes, rather than wait for a resync to come by.
        deadlines = []
        if key.kind == "instance":
            deadlines = [i.deadline for i in snapshot.instances if i.uuid == key.id and i.deadline is not None
                         and (i.vm_state == "building" or i.task_state is not None) and not i.deleted]
        else:
            for node in snapshot.nodes:
                state = bms.PROVISION_STATES.states.get(node.provision_state)
                if node.uuid == key.id and state is not None and not state.stable and state.deadline is not None:
                    deadlines.append(node.provision_updated_at + state.deadline)
        waits = [deadline - snapshot.now for deadline in deadlines if deadline > snapshot.now]
        return min(waits) if waits else None
