"""Which ports a live stack lists as its own: what the orphan-port invariant checks orchestration's
ports against (the tests, the explorer, the reconcilers and `tether check` read it here)."""

from __future__ import annotations

from tether.store import repos
from tether.store.connection import StoreConnection


async def ports_stacks_list(conn: StoreConnection, port_ids: list[str] | None = None) -> dict[str, str]:
    """Each port a live stack lists, by port id: ``STACK_ID/RESOURCE``."""
    filters = {} if port_ids is None else {"port_id": port_ids}
    rows = await repos.stack_ports.find(conn, **filters)
    if not rows:
        return {}
    live = {stack.id for stack in await repos.stacks.find(conn, id=sorted({row.stack_id for row in rows}),
                                                          deleted_at=None)}
    return {row.port_id: f"{row.stack_id}/{row.resource_name}" for row in rows if row.stack_id in live}
