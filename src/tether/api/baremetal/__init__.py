"""Ironic's API (/baremetal/v1), in ironic's wire format at the negotiated microversion.

One module per resource: ``nodes`` (with maintenance), ``states`` (provision
and power requests), ``management`` (boot device, console, validate), ``traits``,
``vifs``, ``allocations``, ``ports``, ``portgroups``, ``chassis``, and ``drivers``
(with the conductors);
``views`` builds the bodies, ``params`` checks what requests carry, and
``errors`` holds what only the HTTP layer refuses.
"""

from tether.api.baremetal import (
    allocations,
    chassis,
    drivers,
    history,
    inspection_rules,
    management,
    node_hardware,
    nodes,
    portgroups,
    ports,
    ramdisk,
    states,
    step_sets,
    traits,
    vifs,
    volumes,
)
from tether.api.baremetal.legacy_paths import LegacyPaths

__all__ = ["ROUTERS", "LegacyPaths"]

# management first: its /nodes/validate must come before nodes' /nodes/{ident}.
ROUTERS = tuple(module.router for module in (management, nodes, states, traits, vifs, allocations, ports, portgroups,
                                             chassis, drivers, volumes, step_sets,
                                             node_hardware, ramdisk, inspection_rules,
                                             history))
