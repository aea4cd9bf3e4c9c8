"""Orchestration (heat): stacks of servers, ports, networks and subnets, made and unmade in order."""

from __future__ import annotations

import random
from dataclasses import dataclass

from tether.runtime.runtime import Runtime
from tether.services.compute import ComputeService
from tether.services.image import ImageService
from tether.services.network import NetworkService
from tether.services.orchestration.engine import Engine
from tether.services.orchestration.internal_ports import InternalPorts, delete_or_hand_over
from tether.services.orchestration.lookups import Lookups
from tether.services.orchestration.properties import Properties
from tether.services.orchestration.recovery import StackRecovery
from tether.services.orchestration.resources import Handlers
from tether.services.orchestration.resources.group import Group
from tether.services.orchestration.resources.nested import NestedStacks, TemplateResource
from tether.services.orchestration.resources.net import Net, Subnet
from tether.services.orchestration.resources.port import Port
from tether.services.orchestration.resources.server import PreparePorts, Server
from tether.services.orchestration.stacks import Stacks
from tether.store.database import Store


@dataclass(frozen=True)
class OrchestrationSteps:
    """The steps emulation may swap for upstream's (see ``tether.emulation``)."""

    prepare_ports: PreparePorts = delete_or_hand_over


class OrchestrationService:
    def __init__(self, store: Store, runtime: Runtime, rng: random.Random, *, compute: ComputeService,
                 network: NetworkService, image: ImageService, steps: OrchestrationSteps = OrchestrationSteps()
                 ) -> None:
        self.store = store
        self.rt = runtime
        lookups = Lookups(compute, image, network)
        internal_ports = InternalPorts(store, runtime, rng, network, compute, lookups)
        servers = Server(store, runtime, rng, compute, lookups, internal_ports, prepare_ports=steps.prepare_ports)
        handlers = Handlers({
            "OS::Nova::Server": servers,
            "OS::Neutron::Port": Port(store, rng, network, lookups),
            "OS::Neutron::Net": Net(store, rng, network),
            "OS::Neutron::Subnet": Subnet(store, rng, network, lookups),
        })
        properties = Properties(store, handlers)
        engine = Engine(store, runtime, rng, handlers, properties)
        # a group's members and a template resource are nested stacks, which the engine drives like any other
        nested = NestedStacks(store, runtime, rng, engine)
        handlers.by_type["OS::Heat::ResourceGroup"] = Group(nested, handlers)
        handlers.template_resource = TemplateResource(nested, properties)
        stacks = Stacks(store, runtime, rng, engine, lookups, properties)
        recovery = StackRecovery(store, engine)

        self.create_stack = stacks.create_stack
        self.update_stack = stacks.update_stack
        self.delete_stack = stacks.delete_stack
        self.find_stack = stacks.find_stack
        self.list_stacks = stacks.list_stacks
        self.resources = stacks.resources
        self.resource = stacks.resource
        self.events = stacks.events
        self.outputs = stacks.outputs
        self.parameters_shown = stacks.parameters_shown
        self.required_by = stacks.required_by
        self.attributes = stacks.attributes
        self.validate_template = stacks.validate_template
        self.recover = recovery.recover
        # compute's news of an instance a stack waits on (subscribed where the cloud is assembled)
        self.instance_changed = servers.instance_changed
