"""The bare-metal service (ironic): nodes, their NICs and VIFs, and the conductor's jobs.

Where things live: ``nodes`` (enrolment, updates, maintenance, power),
``nics`` (ports and portgroups), ``chassis``, ``vifs`` (attach and detach),
``claims`` (what compute uses to hold a node), ``provisioning`` (requests and
job recovery), and the jobs themselves in ``deploy``, ``teardown`` and
``cleaning``.
"""

from __future__ import annotations

from tether.services.baremetal.chassis import ChassisMixin
from tether.services.baremetal.claims import ClaimsMixin
from tether.services.baremetal.nics import NicsMixin
from tether.services.baremetal.nodes import NodesMixin
from tether.services.baremetal.provisioning import ProvisioningMixin
from tether.services.baremetal.steps import BaremetalSteps


class BaremetalService(NodesMixin, NicsMixin, ChassisMixin, ClaimsMixin, ProvisioningMixin):
    """``BaremetalService(store, runtime, rng, network, hardware)``."""


__all__ = ["BaremetalService", "BaremetalSteps"]
