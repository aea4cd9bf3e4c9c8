"""The compute service (nova): servers, interfaces, events, flavors and hypervisors."""

from tether.services.compute.placement import BAREMETAL_HOST
from tether.services.compute.service import ComputeService, ComputeSteps

__all__ = ["BAREMETAL_HOST", "ComputeService", "ComputeSteps"]
