"""Seed 003: a bare-metal instance stuck in BUILD after its node is torn down or deleted.

Nova's ironic driver raises InstanceNotFound when the node vanishes under a
build; the compute manager takes it for the user's delete, cleans up the
networks and returns without touching the instance, which stays in BUILD.
"""

from __future__ import annotations

from typing import Any

from tether.domain.compute import Instance
from tether.services.compute.build import Build
from tether.services.compute.node_vanished import NodeVanished
from tether.store import intents


async def lose_track_of_build(build: Build, instance: Instance, request_id: str, vanished: NodeVanished) -> None:
    build.rt.note("Instance disappeared during build.")
    await build.failure.release.release_ports(instance)
    async with build.store.begin() as conn:
        await intents.forget(conn, f"build:{instance.uuid}")


COMPUTE: dict[str, Any] = {"on_node_vanished": lose_track_of_build}
BAREMETAL: dict[str, Any] = {}
ORCHESTRATION: dict[str, Any] = {}
SILENCED = frozenset({"stuck-transient", "association"})
