"""The port's own lock, which every operation that changes a port holds around its transaction."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager

from tether.domain.errors.network import PortNotFound
from tether.runtime.runtime import Runtime


def port_lock(rt: Runtime, port_id: object) -> AbstractAsyncContextManager[None]:
    """The port's own lock, the last in rule 4's order (instance, node, port)."""
    if not isinstance(port_id, str):
        raise PortNotFound(port_id=port_id)
    return rt.locks.hold("port", port_id)
