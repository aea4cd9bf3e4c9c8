"""The compute service (nova): servers, interfaces, events, flavors and hypervisors."""

from tether.services.compute.service import BAREMETAL_HOST, ComputeService

__all__ = ["BAREMETAL_HOST", "ComputeService"]
