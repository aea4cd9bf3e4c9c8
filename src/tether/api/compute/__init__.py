"""Nova's API (/compute/v2.1): one small module per resource."""

from tether.api.compute import (
    actions,
    diagnostics,
    events,
    flavors,
    hypervisors,
    images,
    interfaces,
    server_actions,
    server_details,
    servers,
)

ROUTERS = (*(module.router for module in (servers, interfaces, actions, diagnostics, events, flavors, hypervisors,
                                          server_actions, server_details, images)), server_actions.console_pages)
