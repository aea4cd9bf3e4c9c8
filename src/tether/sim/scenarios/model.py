"""What a scenario is: a starting cloud, a timeline of concurrent actions, and expectations."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from tether.seeding import DemoShape
from tether.sim.scenarios.env import Env

Action = Callable[[Env], Awaitable[None]]
Expectation = Callable[[Env], Awaitable[list[str]]]


@dataclass(frozen=True)
class Timed:
    """An actor of the scenario: it starts at ``at`` virtual seconds and runs ``action``."""

    at: float
    name: str
    action: Action
    operations: tuple[str, ...] = ()  # what the actor does (``operations.OPERATIONS``), for coverage


@dataclass(frozen=True)
class ExpectedMend:
    """A reconciler's mend that a scenario causes on purpose, and why.

    The reconcilers are the backstop: on a correct build the operations and
    the crash recovery leave nothing for them, so any mend fails the schedule.
    A scenario that plants a disagreement out of band (a row changed behind a
    service's back, a lost event) declares the mend it expects here.
    """

    invariant: str
    reason: str
    after_crash_only: bool = False  # expected only from the recovery of a crash, never without one


@dataclass(frozen=True)
class Scenario:
    name: str
    seed: str  # which bug report it reproduces
    summary: str
    timeline: tuple[Timed, ...]
    expect: Expectation
    shape: DemoShape = field(default_factory=lambda: DemoShape(nodes=1, hypervisors=1))
    prepare: Action | None = None
    # The seed's own timing, as fault rules (like the sleep the reporter added to nova).
    faults: tuple[str, ...] = ()
    deploy_seconds: float = 60.0
    clean_seconds: float = 30.0
    # The upstream bug this scenario reproduces, and the invariant that bug violates.
    bug: str | None = None
    invariant: str | None = None
    tags: tuple[str, ...] = field(default=())
    expected_mends: tuple[ExpectedMend, ...] = ()
    # Protections switched off (``checkpoints.PROTECTIONS``) for the timeline and any recovery, in every
    # mode (the explorer's too): where two layers guard one invariant, the scenario shows one alone.
    protections_off: tuple[str, ...] = ()

    def layer_rules(self) -> list[str]:
        return [f"{name}=off" for name in self.protections_off]

    def mend_expected(self, invariant: str, *, crashed: bool) -> bool:
        return any(mend.invariant == invariant and (crashed or not mend.after_crash_only)
                   for mend in self.expected_mends)
