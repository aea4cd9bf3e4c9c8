"""Many concurrent builds, deletes, attaches, detaches, port deletes and node undeploys.

Each run is chosen and interleaved by one seed (printed on failure; replay
it with ``run_chaos(db, seed)``). Afterwards nothing may be violated,
nothing left in a transient state, and no reply contradicted by the states.
"""

from __future__ import annotations

import pytest

from tether.sim.chaos import run_chaos


@pytest.mark.parametrize("seed", [11, 23, 37, 41])
async def test_concurrent_operations_leave_nothing_behind(seed: int, database) -> None:
    result = await run_chaos(database, seed, operations=50, span=90.0)
    context = f"seed {seed}: replay with run_chaos(database, {seed}, operations=50, span=90.0)"
    assert result.errors == [], (context, result.errors)
    assert result.violations == [], (context, [v.evidence for v in result.violations])
    assert result.leftovers == [], (context, result.leftovers)
    # every reply was judged against the states, and none of them was false
    assert result.inconsistent_replies == [], (context, [v.evidence for v in result.inconsistent_replies])
    assert result.replies >= 10, context
    assert len(result.operations) == 50
    # Something really happened: servers were built while the rest went on.
    assert result.booted >= 5, context

