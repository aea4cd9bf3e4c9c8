"""The network service (neutron). See ``service.py`` for how the parts fit together."""

from tether.services.network.events import (
    NETWORK_CHANGED,
    VIF_DELETED,
    VIF_PLUGGED,
    VIF_UNPLUGGED,
)
from tether.services.network.service import NetworkService
from tether.services.network.subnets import DERIVED

__all__ = [
    "DERIVED",
    "NETWORK_CHANGED",
    "VIF_DELETED",
    "VIF_PLUGGED",
    "VIF_UNPLUGGED",
    "NetworkService",
]
