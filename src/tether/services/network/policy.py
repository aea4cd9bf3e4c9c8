"""Who may see and change what, after neutron's default policy.

A non-admin sees its own project's resources plus shared and external
networks (and a shared network's subnets). What it may not see answers NotFound exactly
like what does not exist, so ids never leak across projects.
"""

from __future__ import annotations

from tether.domain.errors.network import InvalidInput, NotAuthorized
from tether.domain.listing import Filters
from tether.domain.network import Network, Port, Subnet
from tether.services.context import RequestContext


def require_write(ctx: RequestContext) -> None:
    if not ctx.can_write:
        raise NotAuthorized()


def require_admin(ctx: RequestContext) -> None:
    if not ctx.is_admin:
        raise NotAuthorized()


def can_see_network(ctx: RequestContext, network: Network) -> bool:
    return ctx.owns(network.project_id) or network.shared or network.external


def visible_networks(ctx: RequestContext) -> tuple[Filters, ...]:
    """``can_see_network`` as filters a list applies in the database: a row matches one of them."""
    return ({"project_id": [ctx.project_id]}, {"shared": [True]}, {"external": [True]})


def can_see_subnet(ctx: RequestContext, subnet: Subnet, network: Network | None) -> bool:
    """neutron's get_subnet: the owner's, or a shared network's; an external network's subnets stay its
    owner's (others see the network, to route and float IPs to it, not its subnets)."""
    return ctx.owns(subnet.project_id) or (network is not None and network.shared)


def subnets_networks(ctx: RequestContext) -> tuple[Filters, ...]:
    """The networks whose subnets ``can_see_subnet`` shows a non-owner, as filters: the shared ones."""
    return ({"project_id": [ctx.project_id]}, {"shared": [True]})


def can_see_port(ctx: RequestContext, port: Port) -> bool:
    return ctx.owns(port.project_id)


def owns_network(ctx: RequestContext, network: Network) -> bool:
    """Network owners may choose MACs and addresses on it (neutron's ``network_owner`` rule)."""
    return ctx.owns(network.project_id)


def project_for(ctx: RequestContext, requested: str | None, fallback: str | None = None) -> str:
    """The project a new resource belongs to; only admins create on another project's behalf."""
    if requested is not None:
        if requested != ctx.project_id:
            require_admin(ctx)
        return requested
    project = ctx.project_id or fallback
    if not project:
        raise InvalidInput(error_message="project_id is required")
    return project
