"""Neutron's and ironic's errors as nova reports them to its own users."""

from __future__ import annotations

from tether.domain.errors import TetherError
from tether.domain.errors import compute as ce
from tether.domain.errors import network as ne


def network_error(error: TetherError, port_id: str | None = None, network_id: str | None = None) -> TetherError:
    if isinstance(error, ne.PortNotFound):
        return ce.PortNotFound(port_id=port_id or error.kwargs.get("port_id", ""))
    if isinstance(error, ne.NetworkNotFound):
        return ce.NetworkNotFound(network_id=network_id or error.kwargs.get("net_id", ""))
    if isinstance(error, ne.PortInUse):
        return ce.PortInUse(port_id=port_id or error.kwargs.get("port_id", ""))
    if error.status == 409:
        return ce.ComputeConflict(reason=error.message)
    if error.status in (400, 404):
        return ce.ComputeBadRequest(reason=error.message)
    return error
