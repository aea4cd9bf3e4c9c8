"""Rule 3: nothing stays in a transient state past its deadline."""

from __future__ import annotations

from tether.domain.invariants import Violation
from tether.reconcile.base import Reconciler


class StuckTransients(Reconciler):
    invariant = "stuck-transient"

    async def mend(self, violation: Violation) -> bool:
        if "instance" in violation.resources:
            return await self.cloud.compute.expire_transient(violation.resources["instance"])
        return await self.cloud.baremetal.expire_transient(violation.resources["node"])
