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
