"""When a started `tether serve` is ready: a bare-metal boot sent now would find its node.

Providing a node starts its cleaning in the background (ironic's 202), so a cloud that has just
been seeded, or recovered with nodes in cleaning, answers before those nodes are available, and
a bare-metal boot made then fails with "No valid host". The server waits here, before it answers
anything, for every clean that can finish now: one whose hardware is done (the demo's new
machines have nothing to wipe) or not yet started by its job. A clean still running on the
hardware (a node torn down before a restart, with --clean-seconds to go) is not waited for: that
node is busy, as it would be in any running cloud.
"""

from __future__ import annotations

import time

from tether.cloud import Cloud
from tether.domain.baremetal import Node
from tether.domain.baremetal_states import CLEANING, CLEANWAIT
from tether.store import repos

POLL_SECONDS = 0.005


async def settle_nodes(cloud: Cloud, timeout: float) -> list[Node]:
    """Wait until no node's clean can finish now; the nodes that still could when ``timeout`` ran out."""
    deadline = time.monotonic() + timeout
    while True:
        pending = await _finishing(cloud)
        if not pending or time.monotonic() >= deadline:
            return pending
        await cloud.rt.sleep(POLL_SECONDS)


async def _finishing(cloud: Cloud) -> list[Node]:
    async with cloud.store.begin() as conn:
        # A node in maintenance has no job (recovery leaves it to its operator): nothing to wait for.
        cleaning = await repos.nodes.find(conn, provision_state=[CLEANING, CLEANWAIT], maintenance=False)
    now = cloud.rt.now()
    hardware = cloud.world.hardware
    return [node for node in cleaning if (done := hardware.clean_done_at(node.uuid)) is None or done <= now]


__all__ = ["settle_nodes"]
