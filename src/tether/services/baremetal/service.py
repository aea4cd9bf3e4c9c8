"""The bare-metal service (ironic) assembled: each operation built with exactly the parts it needs.

``BaremetalService`` holds no logic; it offers the operations' public methods under one name.
"""

from __future__ import annotations

import random
import socket
from typing import TYPE_CHECKING

from tether.drivers.hardware import FakeHardware
from tether.runtime.bus import MessageBus
from tether.runtime.runtime import Runtime
from tether.services.baremetal.allocations import Allocations
from tether.services.baremetal.chassis import ChassisRegistry
from tether.services.baremetal.claims import Claims
from tether.services.baremetal.cleaning import Cleaning
from tether.services.baremetal.deploy import Deploy
from tether.services.baremetal.inspection_rules import InspectionRules
from tether.services.baremetal.jobs import ConductorJobs
from tether.services.baremetal.lookup import NodeLookup
from tether.services.baremetal.management import Management
from tether.services.baremetal.nics import Nics
from tether.services.baremetal.node_lock import NodeLock
from tether.services.baremetal.nodes import Nodes
from tether.services.baremetal.provisioning import Provisioning
from tether.services.baremetal.step_sets import DEPLOY_TEMPLATES, RUNBOOKS, StepSets
from tether.services.baremetal.steps import BaremetalSteps
from tether.services.baremetal.teardown import Teardown
from tether.services.baremetal.traits import NodeTraits
from tether.services.baremetal.transitions import Transitions, node_key
from tether.services.baremetal.vifs import Vifs
from tether.services.baremetal.volumes import Volumes
from tether.store.database import Store

if TYPE_CHECKING:
    from tether.services.network import NetworkService


class BaremetalService:
    """``BaremetalService(store, runtime, rng, network, hardware)``."""

    def __init__(
        self,
        store: Store,
        runtime: Runtime,
        rng: random.Random,
        network: NetworkService,
        hardware: FakeHardware,
        *,
        host: str | None = None,
        steps: BaremetalSteps | None = None,
        bus: MessageBus | None = None,
    ) -> None:
        steps = steps or BaremetalSteps()
        self.store = store
        self.rt = runtime
        # The conductor's name, shown in Node.reservation while it holds a node's lock.
        self.host = host or socket.gethostname()

        lookup = NodeLookup(store)
        lock = NodeLock(store, runtime, lookup, host=self.host)
        transitions = Transitions(store, runtime, rng, host=self.host)
        # The registry of conductor jobs; the race explorer instruments its ``tokens``.
        self.jobs = jobs = ConductorJobs(store, runtime)
        vifs = Vifs(store, runtime, rng, network=network, lookup=lookup, lock=lock, release_port=steps.release_port)
        cleaning = Cleaning(runtime, hardware=hardware, lock=lock, transitions=transitions, jobs=jobs)
        deploy = Deploy(runtime, hardware=hardware, lock=lock, transitions=transitions, jobs=jobs)
        teardown = Teardown(store, runtime, hardware=hardware, lock=lock, transitions=transitions, jobs=jobs,
                            vifs=vifs, cleaning=cleaning, detach_vifs=steps.detach_vifs_on_teardown)
        provisioning = Provisioning(store, runtime, lookup=lookup, lock=lock, transitions=transitions, jobs=jobs,
                                    vifs=vifs, deploy=deploy, teardown=teardown, cleaning=cleaning)
        nodes = Nodes(store, runtime, rng, hardware=hardware, lookup=lookup, lock=lock, vifs=vifs, jobs=jobs,
                      provisioning=provisioning, bus=bus)
        nics = Nics(store, runtime, rng, lock=lock, vifs=vifs)
        chassis = ChassisRegistry(store, runtime, rng)
        claims = Claims(store, runtime)
        traits = NodeTraits(store, runtime, lookup, lock)
        management = Management(store, runtime, hardware=hardware, lookup=lookup, lock=lock)
        allocations = Allocations(store, runtime, rng, lookup=lookup, lock=lock)
        volumes = Volumes(store, runtime, rng, lock=lock)
        # deploy templates and runbooks: their own operations (get, list, create, update, delete)
        self.deploy_templates = StepSets(store, runtime, rng, DEPLOY_TEMPLATES)
        self.runbooks = StepSets(store, runtime, rng, RUNBOOKS)
        self.inspection_rules = InspectionRules(store, runtime, rng)

        # what the other services and the harness use
        self.find_node = lookup.find
        self.node_key = node_key
        # nodes
        self.create_node = nodes.create_node
        self.get_node = nodes.get_node
        self.list_nodes = nodes.list_nodes
        self.page_nodes = nodes.page_nodes
        self.shards = nodes.shards
        self.node_history = nodes.history
        self.update_node = nodes.update_node
        self.delete_node = nodes.delete_node
        self.set_maintenance = nodes.set_maintenance
        self.set_power_state = nodes.set_power_state
        # ports and portgroups
        self.create_port = nics.create_port
        self.get_port = nics.get_port
        self.list_ports = nics.list_ports
        self.update_port = nics.update_port
        self.delete_port = nics.delete_port
        self.create_portgroup = nics.create_portgroup
        self.get_portgroup = nics.get_portgroup
        self.list_portgroups = nics.list_portgroups
        self.update_portgroup = nics.update_portgroup
        self.delete_portgroup = nics.delete_portgroup
        # chassis
        self.create_chassis = chassis.create_chassis
        self.get_chassis = chassis.get_chassis
        self.list_chassis = chassis.list_chassis
        self.update_chassis = chassis.update_chassis
        self.delete_chassis = chassis.delete_chassis
        # traits
        self.list_traits = traits.list_traits
        self.set_traits = traits.set_traits
        self.add_trait = traits.add_trait
        self.remove_traits = traits.remove_traits
        # management: boot device, console, validation
        self.get_boot_device = management.get_boot_device
        self.supported_boot_devices = management.supported_boot_devices
        self.set_boot_device = management.set_boot_device
        self.get_console = management.get_console
        self.set_console = management.set_console
        self.validate_node = management.validate
        self.set_target_raid_config = management.set_target_raid_config
        # allocations
        self.list_allocations = allocations.list_allocations
        self.get_allocation = allocations.get_allocation
        self.create_allocation = allocations.create_allocation
        self.update_allocation = allocations.update_allocation
        self.delete_allocation = allocations.delete_allocation
        # volume connectors and targets
        self.create_volume_connector = volumes.create_connector
        self.get_volume_connector = volumes.get_connector
        self.list_volume_connectors = volumes.list_connectors
        self.update_volume_connector = volumes.update_connector
        self.delete_volume_connector = volumes.delete_connector
        self.create_volume_target = volumes.create_target
        self.get_volume_target = volumes.get_target
        self.list_volume_targets = volumes.list_targets
        self.update_volume_target = volumes.update_target
        self.delete_volume_target = volumes.delete_target
        # VIFs
        self.vif_list = vifs.vif_list
        self.vif_attach = vifs.vif_attach
        self.vif_detach = vifs.vif_detach
        # what compute uses to hold a node
        self.find_free_nodes = claims.find_free_nodes
        self.claim_node = claims.claim_node
        self.release_node = claims.release_node
        # provisioning and the conductor's jobs
        self.set_provision_state = provisioning.set_provision_state
        self.resume_conductor_jobs = provisioning.resume_conductor_jobs
        self.expire_transient = provisioning.expire_transient

    def now(self) -> float:
        return self.rt.now()
