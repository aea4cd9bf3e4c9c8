"""Many concurrent operations, chosen and interleaved by one seed.

Builds, deletes, interface attaches and detaches, port deletes, node
undeploys and cache refreshes start at random virtual times against a shared
cloud, under a scheduler that interleaves them at random. The same seed
gives the same run. Afterwards the system must settle with no invariant
violated and nothing left in a transient state.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from tether.domain.errors import TetherError
from tether.domain.invariants import Violation, check_all, transient_leftovers
from tether.domain.replies import Reply
from tether.runtime.bugs import Bugs
from tether.runtime.faults import FaultPlan
from tether.seeding import DemoShape
from tether.sim.scenarios.env import Env
from tether.sim.scenarios.model import Scenario, Timed
from tether.sim.scenarios.runner import ScenarioRun
from tether.sim.scheduler import RandomStrategy
from tether.store.database import Database

KINDS = ("boot_vm", "boot_vm", "boot_bm", "boot_bm", "delete_server", "delete_server", "attach_port",
         "detach_port", "delete_port", "delete_port", "undeploy_node", "refresh_cache")


@dataclass
class ChaosResult:
    seed: int
    operations: list[str]
    violations: list[Violation]
    left_by_operations: list[Violation]
    mended: list[Violation]
    leftovers: list[str]
    errors: list[str]
    steps: int = 0
    booted: int = 0
    # Replies the history of states contradicts (``domain.replies``), and how many were judged.
    inconsistent_replies: list[Violation] = field(default_factory=list)
    replies: int = 0

    @property
    def clean(self) -> bool:
        return not (self.violations or self.leftovers or self.errors or self.inconsistent_replies)


def _action(kind: str, index: int, chooser: random.Random) -> Any:
    async def act(env: Env) -> None:
        # GET /servers: the caller's own live servers, newest first (the choices below pick by position)
        servers = (await env.cloud.compute.find_servers(env.ctx, deleted=False))[::-1]
        live = [s for s in servers if s.task_state is None]
        vms = [s for s in live if not s.is_baremetal and s.status == "ACTIVE"]
        try:
            if kind == "boot_vm":
                await env.boot(f"vm{index}", flavor="m1.tiny", wait=False)
            elif kind == "boot_bm":
                await env.boot(f"bm{index}", flavor="baremetal", wait=False)
            elif kind == "delete_server" and servers:
                await env.delete_server(chooser.choice(servers).name, wait=False)
            elif kind == "attach_port" and vms:
                await env.create_port(f"p{index}")
                await env.attach_port(chooser.choice(vms).uuid, f"p{index}")
            elif kind == "detach_port" and vms:
                vm = chooser.choice(vms)
                # the info cache as GET /servers/{id} shows it (all of it: the server is ACTIVE)
                vifs = (await env.cloud.compute.server_record(env.ctx, vm.uuid)).vifs
                if vifs:
                    await env.detach_port(vm.uuid, chooser.choice(vifs).port_id)
            elif kind == "delete_port":
                ports = await env.cloud.network.list_ports(env.ctx)
                if ports:
                    await env.delete_port(chooser.choice(ports).id)
            elif kind == "undeploy_node":
                nodes = [n for n in await env.cloud.baremetal.list_nodes(env.ctx) if n.instance_uuid]
                if nodes:
                    await env.undeploy(chooser.choice(nodes).uuid)
            elif kind == "refresh_cache" and live:
                await env.refresh_cache(chooser.choice(live).uuid)
        except TetherError as error:  # a refused request is a fine outcome; a traceback is not
            env.step(f"{kind} refused: {error.message}")

    return act


def chaos_scenario(seed: int, operations: int, span: float) -> tuple[Scenario, list[str]]:
    planner = random.Random(seed)
    timeline, described = [], []
    for index in range(operations):
        kind = planner.choice(KINDS)
        at = round(planner.uniform(0.0, span), 1)
        timeline.append(Timed(at, f"{kind}-{index}", _action(kind, index, random.Random(planner.random()))))
        described.append(f"t={at} {kind}")

    async def expect_nothing(env: Env) -> list[str]:
        return []

    scenario = Scenario(
        name=f"chaos-{seed}", seed="all", summary="random concurrent operations",
        timeline=tuple(timeline), expect=expect_nothing, shape=DemoShape(nodes=4, hypervisors=2),
        deploy_seconds=20.0, clean_seconds=10.0)
    return scenario, described


async def run_chaos(
    database: Database, seed: int, *, operations: int = 40, span: float = 120.0, bugs: tuple[str, ...] = ()
) -> ChaosResult:
    scenario, described = chaos_scenario(seed, operations, span)
    run = ScenarioRun(scenario, database, bugs=Bugs(bugs), faults=FaultPlan(), seed=seed,
                      strategy_factory=lambda: RandomStrategy(seed))
    result = await run.run()
    booted = sum(1 for step in result.steps if step["text"].startswith("boot ") and "accepted" in step["text"])
    assert run.env is not None
    replies = sum(1 for event in run.env.history if isinstance(event, Reply))
    return ChaosResult(seed, described, result.violations, result.left_by_operations, result.mended,
                       result.leftovers, result.errors, len(result.trace), booted, result.inconsistent_replies,
                       replies)


__all__ = ["ChaosResult", "check_all", "run_chaos", "transient_leftovers"]
