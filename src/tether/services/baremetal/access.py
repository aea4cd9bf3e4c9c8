"""Who may call the bare-metal API, and whom ironic acts as when it talks to the network."""

from __future__ import annotations

from tether.domain.errors import baremetal as be
from tether.services.context import RequestContext


def require_admin(ctx: RequestContext, resource: str) -> None:
    if not ctx.is_admin:
        raise be.HTTPForbidden(resource=resource)


def network_context() -> RequestContext:
    # ironic talks to neutron with its own service credentials, not the caller's.
    return RequestContext.internal()
