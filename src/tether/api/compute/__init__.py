"""Nova's API (/compute/v2.1): one small module per resource."""

from tether.api.compute import (
    actions,
    diagnostics,
    events,
    flavors,
    hypervisors,
    interfaces,
    keypairs,
    quotas,
    servers,
)

ROUTERS = tuple(module.router for module in (servers, interfaces, actions, diagnostics, events, flavors, hypervisors,
                                             keypairs, quotas))
