"""One incarnation of the control plane: every service, wired together in this one place.

A ``World`` is what survives a crash: the database and the hardware (the
hypervisor's guests, the bare-metal machines). A ``Cloud`` is the control
plane running on it; a restart is a new ``Cloud`` on the same ``World``.
"""

from __future__ import annotations

import logging
import random
from dataclasses import dataclass, field
from typing import Any

from argon2 import PasswordHasher, profiles

from tether.domain.events import (
    ComputeNotified,
    GuestDevicePlugged,
    GuestDeviceUnplugged,
    InstanceReleased,
    InstanceStateChanged,
    NodeStateChanged,
)
from tether.domain.identity import DEFAULT_CREDENTIAL_CACHE_SECONDS, DEFAULT_LOCKOUT, DEFAULT_TOKEN_TTL, Lockout
from tether.drivers.hardware import FakeHardware
from tether.drivers.hypervisor import FakeHypervisor
from tether.drivers.image_files import ImageFiles
from tether.emulation import Emulation, emulate
from tether.runtime.bus import MessageBus
from tether.runtime.runtime import Runtime
from tether.services.baremetal import BaremetalService
from tether.services.compute import ComputeService
from tether.services.context import RequestContext
from tether.services.identity.service import IdentityService
from tether.services.image import ImageService
from tether.services.network import NetworkService
from tether.services.orchestration import OrchestrationService
from tether.store.database import Database, Store

compute_log = logging.getLogger("tether.compute")
baremetal_log = logging.getLogger("tether.baremetal")


@dataclass
class World:
    database: Database
    hypervisor: FakeHypervisor
    hardware: FakeHardware
    # image data; in-memory clouds keep it in a temporary directory
    image_files: ImageFiles = field(default_factory=ImageFiles)


class Cloud:
    def __init__(
        self,
        world: World,
        runtime: Runtime,
        rng: random.Random | None = None,
        *,
        fast_passwords: bool = False,
        token_ttl: float = DEFAULT_TOKEN_TTL,
        lockout: Lockout = DEFAULT_LOCKOUT,
        credential_cache_seconds: float = DEFAULT_CREDENTIAL_CACHE_SECONDS,
        **compute_options: Any,
    ) -> None:
        self.world = world
        self.rt = runtime
        self.rng = rng or random.Random()
        self.bus = MessageBus()
        self.store = Store(world.database, runtime, self.bus)
        # Upstream's steps in place of Tether's, where an emulated bug is on: chosen once, here.
        self.emulation: Emulation = emulate(runtime.bugs.names)
        # Scenarios and the explorer build many clouds; argon2's defaults cost ~0.3 s a hash.
        hasher = PasswordHasher.from_parameters(profiles.CHEAPEST) if fast_passwords else None
        self.identity = IdentityService(self.store, runtime, self.rng, password_hasher=hasher, token_ttl=token_ttl,
                                        lockout=lockout, credential_cache_seconds=credential_cache_seconds)
        self.image = ImageService(self.store, runtime, self.rng, world.image_files)
        self.network = NetworkService(self.store, runtime, self.rng, bus=self.bus)
        self.baremetal = BaremetalService(self.store, runtime, self.rng, self.network, world.hardware,
                                          steps=self.emulation.baremetal, bus=self.bus)
        self.compute = ComputeService(
            self.store, runtime, self.rng, network=self.network, baremetal=self.baremetal,
            image=self.image, hypervisor=world.hypervisor, steps=self.emulation.compute, **compute_options)
        self.orchestration = OrchestrationService(self.store, runtime, self.rng, compute=self.compute,
                                                  network=self.network, image=self.image,
                                                  steps=self.emulation.orchestration)
        self._subscribe()
        # The hardware outlives incarnations; it reports to whichever one is alive now.
        world.hypervisor.report_to(self.bus.publish)

    def unusual(self) -> list[str]:
        """What makes this cloud misbehave on purpose: each emulated bug and each fault rule in force."""
        return [f"bug={bug}" for bug in sorted(self.rt.bugs.names)] + [f"fault={rule}" for rule in self.rt.faults.rules]

    def _subscribe(self) -> None:
        """Every reaction of one service to another's news, in this one place."""
        self.bus.subscribe(ComputeNotified, self._notify_compute)
        self.bus.subscribe(InstanceReleased, lambda released: self.rt.spawn(
            self.compute.node_released(released.instance_uuid, released.node_uuid),
            name=f"compute.node_released:{released.instance_uuid[:8]}"))
        self.bus.subscribe(GuestDevicePlugged, lambda plugged: self.rt.spawn(
            self.network.port_plugged(plugged.port_id), name=f"agent.plugged:{plugged.port_id[:8]}"))
        self.bus.subscribe(GuestDeviceUnplugged, lambda unplugged: self.rt.spawn(
            self.network.port_unplugged(unplugged.port_id), name=f"agent.unplugged:{unplugged.port_id[:8]}"))
        self.bus.subscribe(InstanceStateChanged, _log_instance_state)
        # a stack waiting for its server's build or delete to end
        self.bus.subscribe(InstanceStateChanged,
                           lambda changed: self.orchestration.instance_changed(changed.instance_uuid))
        self.bus.subscribe(NodeStateChanged, _log_node_state)

    def _notify_compute(self, notified: ComputeNotified) -> None:
        # The same path as POST /os-server-external-events, as neutron's notifier uses it.
        # Named by what it carries: deliveries about different ports do not share a name (and
        # its counter), so the race explorer does not see them as ordered by it.
        first = notified.events[0]
        about = f"{first.name}:{first.port_id[:8]}"
        if len(notified.events) > 1:
            about += f"+{len(notified.events) - 1}"
        bodies = [event.as_body() for event in notified.events]
        self.rt.spawn(self.compute.external_events(RequestContext.internal(), bodies),
                      name=f"network.notify_compute:{about}")

    async def recover(self) -> None:
        """Resume or roll back whatever a previous incarnation left unfinished (rule 5)."""
        await self.baremetal.resume_conductor_jobs()
        await self.image.recover()
        await self.compute.recover()
        await self.orchestration.recover()


def _log_instance_state(changed: InstanceStateChanged) -> None:
    (vm_before, task_before), (vm_after, task_after) = changed.before, changed.after
    compute_log.info("instance %s: %s/%s -> %s/%s (%s)", changed.instance_uuid, vm_before, task_before or "-",
                     vm_after, task_after or "-", changed.event)


def _log_node_state(changed: NodeStateChanged) -> None:
    baremetal_log.info("node %s: %s -> %s (%s)", changed.node_uuid, changed.before, changed.after, changed.event)
