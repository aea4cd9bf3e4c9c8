"""The bare-metal service (ironic): nodes, their NICs and VIFs, and the conductor's jobs.

``service`` assembles one module per operation; ``steps`` is where an emulated upstream bug plugs in.
"""

from __future__ import annotations

from tether.services.baremetal.service import BaremetalService
from tether.services.baremetal.steps import BaremetalSteps

__all__ = ["BaremetalService", "BaremetalSteps"]
