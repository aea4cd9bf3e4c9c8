"""The network service (neutron): networks, subnets, ports, and the internal calls that bind them."""

from __future__ import annotations

from tether.services.network.agent import AgentOperations
from tether.services.network.bindings import BindingOperations
from tether.services.network.networks import NetworkOperations
from tether.services.network.ports import PortOperations
from tether.services.network.subnets import SubnetOperations


class NetworkService(
    NetworkOperations, SubnetOperations, PortOperations, BindingOperations, AgentOperations
):
    """``NetworkService(store, runtime, rng, bus=None)``.

    What compute must hear of (os-server-external-events) is published on
    ``bus`` as ``ComputeNotified``, after the change it describes has committed.
    """
