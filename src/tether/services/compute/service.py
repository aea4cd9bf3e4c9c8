"""The compute service (nova): its operations, each a module of its own, assembled with their dependencies.

``ComputeService`` holds no logic. It builds each operation with exactly the
parts that operation needs and offers the operations' public methods under
one name, which is how the API, the other services and the harness reach them.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tether.drivers.hypervisor import FakeHypervisor
from tether.runtime.runtime import Runtime
from tether.services.compute.aggregates import Aggregates
from tether.services.compute.attach import Attach, PlugAndRecord, plug_then_record
from tether.services.compute.build import Build, OnNodeVanished, fail_the_build
from tether.services.compute.compute_services import ComputeServices
from tether.services.compute.consoles import Consoles
from tether.services.compute.delete import Delete, ReleaseForDelete, release_for_delete
from tether.services.compute.detach import Detach
from tether.services.compute.events import ExternalEvents
from tether.services.compute.failure import InstanceFailure
from tether.services.compute.flavor_settings import FlavorSettings
from tether.services.compute.flavors import Flavors
from tether.services.compute.guests import Guests
from tether.services.compute.hypervisors import Hypervisors
from tether.services.compute.instances import Instances
from tether.services.compute.keypairs import Keypairs
from tether.services.compute.network_sync import (
    NetworkSync,
    OnRefresh,
    OnVifDeleted,
    reconcile_on_refresh,
    reconcile_on_vif_deleted,
)
from tether.services.compute.placement import Placement
from tether.services.compute.plugging import Plugging
from tether.services.compute.port_ownership import PortOwnership
from tether.services.compute.power import Power
from tether.services.compute.queries import ComputeQueries
from tether.services.compute.quotas import Quotas
from tether.services.compute.rebuild import Rebuild
from tether.services.compute.recovery import Recovery
from tether.services.compute.release import Release, ReleaseNodes, detach_listed_vifs_then_unprovision
from tether.services.compute.rescue import Rescue
from tether.services.compute.resize import Resize
from tether.services.compute.server_action import ServerActions
from tether.services.compute.server_groups import ServerGroups
from tether.services.compute.server_updates import ServerUpdates
from tether.services.compute.servers import Servers
from tether.services.compute.snapshot import Snapshot
from tether.services.compute.zones import ZoneMap
from tether.store.database import Store

if TYPE_CHECKING:
    from tether.services.baremetal import BaremetalService
    from tether.services.image import ImageService
    from tether.services.network import NetworkService


@dataclass(frozen=True)
class ComputeSteps:
    """The steps of compute that an emulated upstream bug replaces (``tether.emulation``); Tether's own by default."""

    on_node_vanished: OnNodeVanished = fail_the_build
    release_nodes: ReleaseNodes = detach_listed_vifs_then_unprovision
    release_for_delete: ReleaseForDelete = release_for_delete
    plug_and_record: PlugAndRecord = plug_then_record
    on_vif_deleted: OnVifDeleted = reconcile_on_vif_deleted
    on_refresh: OnRefresh = reconcile_on_refresh


class ComputeService:
    def __init__(
        self,
        store: Store,
        runtime: Runtime,
        rng: random.Random,
        *,
        network: NetworkService,
        baremetal: BaremetalService,
        image: ImageService,
        hypervisor: FakeHypervisor,
        steps: ComputeSteps = ComputeSteps(),
        vif_plug_timeout: float = 300.0,
        node_poll_interval: float = 10.0,
        node_teardown_timeout: float = 900.0,
    ) -> None:
        self.store = store
        self.rt = runtime
        instances = Instances(store)
        ownership = PortOwnership(network)
        plugging = Plugging(hypervisor, baremetal)
        release = Release(store, runtime, hypervisor=hypervisor, baremetal=baremetal, network=network,
                          ownership=ownership, node_poll_interval=node_poll_interval,
                          node_teardown_timeout=node_teardown_timeout, release_nodes=steps.release_nodes)
        failure = InstanceFailure(store, runtime, instances, release)
        zones = ZoneMap()
        placement = Placement(store, runtime, baremetal, zones)
        build = Build(store, runtime, instances=instances, placement=placement,
                      failure=failure, network=network, baremetal=baremetal, hypervisor=hypervisor,
                      vif_plug_timeout=vif_plug_timeout, node_poll_interval=node_poll_interval,
                      on_node_vanished=steps.on_node_vanished)
        delete = Delete(store, runtime, instances, release, release_step=steps.release_for_delete)
        sync = NetworkSync(store, runtime, instances=instances, network=network, plugging=plugging,
                           ownership=ownership, on_vif_deleted=steps.on_vif_deleted, on_refresh=steps.on_refresh)
        flavors = Flavors(store, rng)
        servers = Servers(store, runtime, rng, flavors=flavors, image=image, network=network, baremetal=baremetal,
                          build=build, delete=delete)
        attach = Attach(store, runtime, instances=instances, network=network, plugging=plugging,
                        ownership=ownership, plug_and_record=steps.plug_and_record)
        detach = Detach(store, runtime, instances=instances, network=network, plugging=plugging,
                        ownership=ownership)
        events = ExternalEvents(runtime, instances, sync)
        guests = Guests(hypervisor, baremetal)
        actions = ServerActions(store, runtime, instances, guests)
        power = Power(runtime, actions, guests)
        rebuild = Rebuild(runtime, actions, guests, image=image, baremetal=baremetal,
                          node_poll_interval=node_poll_interval)
        resize = Resize(runtime, actions, guests, flavors, plugging, network, placement)
        rescue = Rescue(runtime, actions, guests, image)
        snapshot = Snapshot(runtime, rng, actions, image)
        updates = ServerUpdates(store, runtime)
        consoles = Consoles(store, instances, guests)
        recovery = Recovery(store, runtime, instances=instances, failure=failure, delete=delete, sync=sync,
                            plugging=plugging, baremetal=baremetal, actions=actions)
        queries = ComputeQueries(store, network=network, hypervisor=hypervisor)
        hypervisors = Hypervisors(store)
        keypairs = Keypairs(store, runtime)
        quotas = Quotas(store)
        services = ComputeServices(store)
        aggregates = Aggregates(store, runtime, rng, zones)
        groups = ServerGroups(store, runtime, rng)
        flavor_settings = FlavorSettings(store)

        self.live_instance = instances.live
        # servers
        self.create_server = servers.create_server
        self.create_servers = servers.create_servers
        self.delete_server = servers.delete_server
        # server actions (each through the instance state table, see server_action)
        self.power_action = power.power_action
        self.reset_state = actions.reset_state
        self.reboot_server = power.reboot
        self.rebuild_server = rebuild.rebuild
        self.resize_server = resize.resize
        self.confirm_resize = resize.confirm
        self.revert_resize = resize.revert
        self.rescue_server = rescue.rescue
        self.unrescue_server = rescue.unrescue
        self.create_server_image = snapshot.create_image
        self.create_server_backup = snapshot.create_backup
        # changes that leave the machine alone
        self.update_server = updates.update_server
        self.lock_server = updates.lock
        self.unlock_server = updates.unlock
        self.change_password = updates.change_password
        self.inject_network_info = updates.inject_network_info
        self.server_metadata = updates.metadata
        self.server_metadata_item = updates.metadata_item
        self.set_server_metadata = updates.set_metadata
        self.delete_server_metadata_item = updates.delete_metadata_item
        self.server_tags = updates.tags
        self.server_has_tag = updates.has_tag
        self.set_server_tags = updates.set_tags
        self.add_server_tag = updates.add_tag
        self.delete_server_tag = updates.delete_tag
        self.delete_server_tags = updates.delete_tags
        # consoles
        self.console_output = consoles.console_output
        self.remote_console = consoles.remote_console
        self.console_of = consoles.console_of
        # interfaces and what the network service tells us
        self.attach_interface = attach.attach_interface
        self.detach_interface = detach.detach_interface
        self.external_events = events.external_events
        self.reconcile_network = sync.reconcile
        self.refresh_network_cache = sync.refresh
        self.give_back_port = ownership.give_back
        # what nothing drives any more
        self.recover = recovery.recover
        self.expire_transient = recovery.expire_transient
        self.forget_node = recovery.forget_node
        self.node_released = recovery.node_released
        # flavors and hypervisors
        self.create_flavor = flavors.create_flavor
        self.delete_flavor = flavors.delete_flavor
        self.visible_flavors = flavors.visible_flavors
        self.visible_flavor = flavors.visible_flavor
        self.create_hypervisor = hypervisors.create_hypervisor
        self.hypervisor_records = hypervisors.hypervisor_records
        self.hypervisor_uptime = hypervisor.uptime
        # keypairs and quotas
        self.create_keypair = keypairs.create_keypair
        self.keypairs = keypairs.keypairs
        self.keypair = keypairs.keypair
        self.delete_keypair = keypairs.delete_keypair
        self.quota_set = quotas.quota_set
        self.quota_detail = quotas.quota_detail
        self.default_quota_set = quotas.default_quota_set
        self.update_quota_set = quotas.update_quota_set
        self.delete_quota_set = quotas.delete_quota_set
        self.absolute_limits = quotas.absolute_limits
        # services, aggregates and the availability zones they make
        self.compute_services = services.compute_services
        self.update_compute_service = services.update_compute_service
        self.aggregates = aggregates.aggregates
        self.aggregate = aggregates.aggregate
        self.create_aggregate = aggregates.create_aggregate
        self.update_aggregate = aggregates.update_aggregate
        self.delete_aggregate = aggregates.delete_aggregate
        self.add_aggregate_host = aggregates.add_host
        self.remove_aggregate_host = aggregates.remove_host
        self.set_aggregate_metadata = aggregates.set_metadata
        self.availability_zones = aggregates.zones
        # server groups (the scheduler honours them in placement.py)
        self.create_server_group = groups.create_server_group
        self.server_groups = groups.server_groups
        self.server_group = groups.server_group
        self.delete_server_group = groups.delete_server_group
        # flavor extra specs, access and description
        self.set_flavor_extra_specs = flavor_settings.set_extra_specs
        self.delete_flavor_extra_spec = flavor_settings.delete_extra_spec
        self.describe_flavor = flavor_settings.describe_flavor
        self.flavor_access = flavor_settings.flavor_access
        self.add_flavor_access = flavor_settings.add_tenant_access
        self.remove_flavor_access = flavor_settings.remove_tenant_access
        # what the API reads (and visible_flavor(s), hypervisor_records above): compute's one read API,
        # which tests and the scenario harness read through too
        self.server_record = queries.server_record
        self.server_records = queries.server_records
        self.find_servers = queries.find_servers
        self.page_servers = queries.page_servers
        self.listed_instance = queries.listed_instance
        self.tenant_usage = queries.tenant_usage
        self.instance_actions = queries.instance_actions
        self.instance_action = queries.instance_action
        self.interface_attachments = queries.interface_attachments
        self.interface_attachment = queries.interface_attachment
        self.guest_view = queries.guest_view

    def now(self) -> float:
        return self.rt.now()
