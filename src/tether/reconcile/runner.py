"""Run every reconciler until nothing changes; periodically in a live cloud."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tether.audit.local import collect
from tether.domain.invariants import Violation
from tether.reconcile.base import Reconciler
from tether.reconcile.instances import ZombieInterfaces
from tether.reconcile.nodes import Associations, StaleVifs
from tether.reconcile.ports import NicMacs, OrphanPorts
from tether.reconcile.transients import StuckTransients

if TYPE_CHECKING:
    from tether.cloud import Cloud

# Ownership first (who runs where), then what hangs off it.
RECONCILERS: tuple[type[Reconciler], ...] = (
    StuckTransients, Associations, StaleVifs, ZombieInterfaces, OrphanPorts, NicMacs,
)


@dataclass
class Pass:
    mended: list[Violation] = field(default_factory=list)
    failed: list[tuple[Violation, str]] = field(default_factory=list)


async def reconcile_once(cloud: Cloud) -> Pass:
    result = Pass()
    for reconciler_type in RECONCILERS:
        reconciler = reconciler_type(cloud)
        if not reconciler.enabled():
            continue
        for violation in reconciler.violations(await collect(cloud)):
            try:
                if await reconciler.mend(violation):
                    cloud.rt.note(f"reconciler mended {violation.invariant}: {violation.evidence}")
                    result.mended.append(violation)
            except Exception as error:  # one bad key must not stop the others
                result.failed.append((violation, str(error)))
    return result


async def reconcile_until_settled(cloud: Cloud, max_passes: int = 10) -> list[Violation]:
    """Every violation the reconcilers mended, pass after pass, until a pass changes nothing."""
    mended: list[Violation] = []
    for _ in range(max_passes):
        result = await reconcile_once(cloud)
        mended.extend(result.mended)
        if not result.mended:
            break
        await settle(cloud)
    return mended


async def settle(cloud: Cloud) -> None:
    """Let spawned work (events, conductor jobs) finish, where the executor runs it by itself."""
    await cloud.rt.drain()


async def reconcile_forever(cloud: Cloud, interval: float) -> None:
    while cloud.rt.alive:
        await reconcile_once(cloud)
        await cloud.rt.sleep(interval)
