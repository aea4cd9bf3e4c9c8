"""The network service (neutron). See ``service.py`` for how the parts fit together."""

from tether.services.network.service import NetworkService
from tether.services.network.subnets import DERIVED

__all__ = ["DERIVED", "NetworkService"]
