"""The compute service (nova): one object composed of small, single-purpose parts."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

from tether.domain.compute import Instance
from tether.domain.errors import compute as ce
from tether.drivers.hypervisor import FakeHypervisor
from tether.services.base import Service
from tether.services.compute.build import BuildOps
from tether.services.compute.events import EventOps
from tether.services.compute.flavors import FlavorOps
from tether.services.compute.interfaces import InterfaceOps
from tether.services.compute.queries import QueryOps
from tether.services.compute.recovery import RecoveryOps
from tether.services.compute.servers import ServerOps
from tether.services.compute.teardown import TeardownOps
from tether.services.context import RequestContext
from tether.sim.runtime import Runtime
from tether.store import repos
from tether.store.database import Store

if TYPE_CHECKING:
    from tether.services.baremetal import BaremetalService
    from tether.services.image import ImageService
    from tether.services.network import NetworkService
    from tether.store.database import StoreConnection

BAREMETAL_HOST = "ironic"


class ComputeService(
    ServerOps, BuildOps, TeardownOps, InterfaceOps, EventOps, FlavorOps, RecoveryOps, QueryOps, Service
):
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
        vif_plug_timeout: float = 300.0,
        node_poll_interval: float = 10.0,
        node_teardown_timeout: float = 900.0,
    ) -> None:
        super().__init__(store, runtime, rng)
        self.network = network
        self.baremetal = baremetal
        self.image = image
        self.hypervisor = hypervisor
        self.vif_plug_timeout = vif_plug_timeout
        self.node_poll_interval = node_poll_interval
        self.node_teardown_timeout = node_teardown_timeout

    # -- shared lookups ---------------------------------------------------------

    async def _visible_instance(self, conn: StoreConnection, ctx: RequestContext, uuid: str) -> Instance:
        instance = await repos.instances.get(conn, uuid)
        if instance is None or instance.deleted or not ctx.owns(instance.project_id):
            raise ce.InstanceNotFound(instance_id=uuid)
        return instance

    async def _live_instance(self, uuid: str) -> Instance | None:
        async with self.store.begin() as conn:
            instance = await repos.instances.get(conn, uuid)
        if instance is None or instance.deleted:
            return None
        return instance

    def _internal(self, instance: Instance) -> RequestContext:
        return RequestContext.internal(project_id=instance.project_id)
