"""Seed 003's node-delete races, explored with crashes: recovery alone restores the invariants.

A crash can leave a bare-metal server's cache listing a port its node no longer has a VIF for (a
tear-down that ran before the crash). A restart looks only at what disagrees (store.suspects), so
that disagreement must be one it finds; before it was, the zombie interface was left to the periodic
reconciler, which the verdict counts as a failure of recovery."""

from __future__ import annotations

import pytest

from tether.sim.explore import ExploreOptions, explore
from tether.sim.scenarios.library import SCENARIOS


@pytest.mark.parametrize("name", ["delete-races-undeploy-and-node-delete", "delete-races-maintenance-and-node-delete"])
async def test_node_delete_races_recover_from_every_crash_without_a_reconciler(name: str) -> None:
    report = await explore(SCENARIOS[name], ExploreOptions(exhaustive=True, crashes=True))
    assert report.complete
    assert report.crash_states >= 50
    assert report.clean, [f.as_dict() for f in report.violations.values()]
    assert not report.mended, [f.as_dict() for f in report.mended.values()]
