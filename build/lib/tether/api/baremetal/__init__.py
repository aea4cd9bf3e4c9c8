"""Ironic's API (/baremetal/v1), in ironic's wire format at the negotiated microversion.

One module per resource: ``nodes`` (with maintenance), ``states`` (provision
and power requests), ``vifs``, ``ports``, ``portgroups`` and ``chassis``;
``views`` builds the bodies, ``params`` checks what requests carry, and
``errors`` holds what only the HTTP layer refuses.
"""

from tether.api.baremetal import chassis, nodes, portgroups, ports, states, vifs

ROUTERS = tuple(module.router for module in (nodes, states, vifs, ports, portgroups, chassis))
