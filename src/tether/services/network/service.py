"""The network service (neutron): its parts, each a module of its own, assembled with their dependencies.

``NetworkService`` holds no logic. It builds each part with exactly what that
part needs and offers the parts' public methods under one name, which is how
the API, compute, bare metal and the harness reach them.

- ``networks``, ``subnets``, ``ports``: the resources as neutron's API has them.
- ``bindings``: the internal calls compute and bare metal bind, release and
  re-MAC ports with (no policy).
- ``agent``: what the L2 agent reports, a port's device up or down on a host.
- ``fixed_ips``: a port's addresses, inside the caller's transaction.
- ``rows``, ``lookups``, ``port_lock``, ``notifier``: what the parts share.
"""

from __future__ import annotations

import random

from tether.runtime.bus import MessageBus
from tether.runtime.runtime import Runtime
from tether.services.network.agent import Agent
from tether.services.network.agent_records import AgentRecords
from tether.services.network.bindings import Bindings
from tether.services.network.floating_ips import FloatingIps
from tether.services.network.networks import Networks
from tether.services.network.notifier import Notifier
from tether.services.network.ports import Ports
from tether.services.network.quotas import Quotas
from tether.services.network.routers import Routers
from tether.services.network.security_groups import SecurityGroups
from tether.services.network.subnets import Subnets
from tether.services.network.tags import Tags
from tether.store.database import Store


class NetworkService:
    """``NetworkService(store, runtime, rng, bus=None)``.

    What compute must hear of (os-server-external-events) is published on
    ``bus`` as ``ComputeNotified``, after the change it describes has committed.
    """

    def __init__(self, store: Store, runtime: Runtime, rng: random.Random, bus: MessageBus | None = None) -> None:
        self.store = store
        self.rt = runtime
        notifier = Notifier(bus)
        networks = Networks(store, runtime, rng)
        subnets = Subnets(store, runtime, rng)
        security_groups = SecurityGroups(store, runtime, rng)
        ports = Ports(store, runtime, rng, notifier, security_groups)
        bindings = Bindings(store, runtime, rng)
        agent = Agent(store, runtime, notifier)

        # networks
        self.create_network = networks.create_network
        self.get_network = networks.get_network
        self.list_networks = networks.list_networks
        self.update_network = networks.update_network
        self.delete_network = networks.delete_network
        # subnets
        self.create_subnet = subnets.create_subnet
        self.get_subnet = subnets.get_subnet
        self.list_subnets = subnets.list_subnets
        self.update_subnet = subnets.update_subnet
        self.delete_subnet = subnets.delete_subnet
        # ports
        self.create_port = ports.create_port
        self.create_ports = ports.create_ports
        self.get_port = ports.get_port
        self.find_port = ports.find_port
        self.list_ports = ports.list_ports
        self.update_port = ports.update_port
        self.delete_port = ports.delete_port
        # security groups and their rules
        self.ensure_default_security_group = security_groups.ensure_default
        self.create_security_group = security_groups.create_security_group
        self.get_security_group = security_groups.get_security_group
        self.list_security_groups = security_groups.list_security_groups
        self.update_security_group = security_groups.update_security_group
        self.delete_security_group = security_groups.delete_security_group
        self.rules_of = security_groups.rules_of
        self.create_security_group_rules = security_groups.create_security_group_rules
        self.get_security_group_rule = security_groups.get_security_group_rule
        self.list_security_group_rules = security_groups.list_security_group_rules
        self.update_security_group_rule = security_groups.update_security_group_rule
        self.delete_security_group_rule = security_groups.delete_security_group_rule
        # the agents neutron would list
        agents = AgentRecords(store, runtime, runtime.now())
        self.list_agents = agents.list_agents
        self.get_agent = agents.get_agent
        # routers and floating IPs
        routers = Routers(store, runtime, rng)
        self.create_router = routers.create_router
        self.get_router = routers.get_router
        self.list_routers = routers.list_routers
        self.update_router = routers.update_router
        self.delete_router = routers.delete_router
        self.router_gateway_ports = routers.gateway_ports
        self.add_router_interface = routers.add_router_interface
        self.remove_router_interface = routers.remove_router_interface
        floating_ips = FloatingIps(store, runtime, rng)
        self.create_floatingip = floating_ips.create_floatingip
        self.get_floatingip = floating_ips.get_floatingip
        self.list_floatingips = floating_ips.list_floatingips
        self.update_floatingip = floating_ips.update_floatingip
        self.delete_floatingip = floating_ips.delete_floatingip
        # neutron's quotas
        quotas = Quotas(store)
        self.projects_with_limits = quotas.projects_with_limits
        self.project_limits = quotas.project_limits
        self.project_usage = quotas.project_usage
        self.set_quota_limits = quotas.set_limits
        self.reset_quota_limits = quotas.reset_limits
        # tags
        tags = Tags(store)
        self.tags_of = tags.tags_of
        self.replace_tags = tags.replace_tags
        self.add_tag = tags.add_tag
        self.has_tag = tags.has_tag
        self.remove_tag = tags.remove_tag
        self.remove_all_tags = tags.remove_all
        # what compute and bare metal bind ports with
        self.bind_port = bindings.bind_port
        self.unbind_port = bindings.unbind_port
        self.release_port = bindings.release_port
        self.set_mac_address = bindings.set_mac_address
        # what the L2 agent reports
        self.port_plugged = agent.port_plugged
        self.port_unplugged = agent.port_unplugged

    def now(self) -> float:
        return self.rt.now()
