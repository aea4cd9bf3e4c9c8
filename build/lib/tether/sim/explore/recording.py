"""Instruments that note what each step touches, outside the services' own code.

The explorer wraps what actors share: the lock table, the conductor's job
table, the scenario's names, the hypervisor and the bare-metal hardware.
Each wrapper reports to a ``Recorder``, which files the access under the
step being run; between explored steps (seeding, the verdict) nothing is
recorded. The store is watched separately (``sql_footprint``).
"""

from __future__ import annotations

import random
from collections.abc import Hashable, Iterator
from typing import Any

from tether.domain.compute import GuestInterface
from tether.drivers.hardware import FakeHardware, Machine
from tether.drivers.hypervisor import FakeHypervisor
from tether.sim.explore.footprint import ANY, READ, WRITE, Footprint
from tether.sim.scheduler import Scheduler


class Recorder:
    """Files every access under the footprint of the step being run, if any."""

    def __init__(self) -> None:
        self.current: Footprint | None = None
        self.busy = False  # set while the recorder itself reads the store

    def touch(self, space: str, key: Hashable, mode: str) -> None:
        if self.current is not None:
            self.current.touch(space, key, mode)


class RecordingDict(dict):  # type: ignore[type-arg]
    """A dict whose every lookup and change is an access to ``space``."""

    def __init__(self, recorder: Recorder, space: str, *args: Any) -> None:
        super().__init__(*args)
        self._recorder = recorder
        self._space = space

    def _note(self, key: Hashable, mode: str) -> None:
        self._recorder.touch(self._space, key, mode)

    def __contains__(self, key: object) -> bool:
        self._note(key, READ)  # type: ignore[arg-type]
        return super().__contains__(key)

    def __getitem__(self, key: Hashable) -> Any:
        self._note(key, READ)
        return super().__getitem__(key)

    def get(self, key: Hashable, default: Any = None) -> Any:
        self._note(key, READ)
        return super().get(key, default)

    def __setitem__(self, key: Hashable, value: Any) -> None:
        self._note(key, WRITE)
        super().__setitem__(key, value)

    def __delitem__(self, key: Hashable) -> None:
        self._note(key, WRITE)
        super().__delitem__(key)

    def pop(self, key: Hashable, *default: Any) -> Any:
        self._note(key, WRITE)
        return super().pop(key, *default)

    def setdefault(self, key: Hashable, default: Any = None) -> Any:
        self._note(key, WRITE)
        return super().setdefault(key, default)

    def __iter__(self) -> Iterator[Any]:
        self._note(ANY, READ)
        return super().__iter__()

    def __len__(self) -> int:
        self._note(ANY, READ)
        return super().__len__()

    def keys(self):  # type: ignore[no-untyped-def]
        self._note(ANY, READ)
        return super().keys()

    def values(self):  # type: ignore[no-untyped-def]
        self._note(ANY, READ)
        return super().values()

    def items(self):  # type: ignore[no-untyped-def]
        self._note(ANY, READ)
        return super().items()


class RecordingHypervisor(FakeHypervisor):
    """The fake hypervisor, each guest (by instance) a resource of its own."""

    def __init__(self, recorder: Recorder) -> None:
        super().__init__()
        self._recorder = recorder

    def _note(self, instance_uuid: str | None, mode: str) -> None:
        self._recorder.touch("hv", instance_uuid if instance_uuid is not None else ANY, mode)

    def create_domain(self, host: str, instance_uuid: str) -> None:
        self._note(instance_uuid, WRITE)
        super().create_domain(host, instance_uuid)

    def destroy_domain(self, host: str, instance_uuid: str) -> list[GuestInterface]:
        self._note(instance_uuid, WRITE)
        return super().destroy_domain(host, instance_uuid)

    def has_domain(self, host: str, instance_uuid: str) -> bool:
        self._note(instance_uuid, READ)
        return super().has_domain(host, instance_uuid)

    def domains(self) -> list[tuple[str, str]]:
        self._note(None, READ)
        return super().domains()

    def plug(self, host: str, instance_uuid: str, port_id: str, mac: str) -> GuestInterface:
        self._note(instance_uuid, WRITE)
        return super().plug(host, instance_uuid, port_id, mac)

    def unplug(self, host: str, instance_uuid: str, port_id: str) -> bool:
        self._note(instance_uuid, WRITE)
        return super().unplug(host, instance_uuid, port_id)

    def interfaces(self, instance_uuid: str | None = None, host: str | None = None) -> list[GuestInterface]:
        self._note(instance_uuid, READ)
        return super().interfaces(instance_uuid, host)

    # -- what survives a crash, for snapshots ---------------------------------------

    def state(self) -> tuple[dict[tuple[str, str, str], GuestInterface], set[tuple[str, str]]]:
        return dict(self._interfaces), set(self._domains)

    def restore(self, state: tuple[dict[tuple[str, str, str], GuestInterface], set[tuple[str, str]]]) -> None:
        interfaces, domains = state
        self._interfaces = dict(interfaces)
        self._domains = set(domains)


class RecordingHardware(FakeHardware):
    """The fake bare-metal hardware, each machine a resource of its own."""

    def __init__(self, recorder: Recorder, *, deploy_seconds: float, clean_seconds: float) -> None:
        super().__init__(deploy_seconds=deploy_seconds, clean_seconds=clean_seconds)
        self._recorder = recorder

    def _note(self, node_uuid: str, mode: str) -> None:
        self._recorder.touch("hw", node_uuid, mode)

    def fail(self, node_uuid: str, action: str, times: int = 1, message: str | None = None) -> None:
        self._note(node_uuid, WRITE)
        super().fail(node_uuid, action, times, message)

    def power_state(self, node_uuid: str) -> str:
        self._note(node_uuid, READ)
        return super().power_state(node_uuid)

    def set_power(self, node_uuid: str, on: bool) -> str:
        self._note(node_uuid, WRITE)
        return super().set_power(node_uuid, on)

    def start_deploy(self, node_uuid: str, now: float) -> float:
        self._note(node_uuid, WRITE)
        return super().start_deploy(node_uuid, now)

    def deploy_started_at(self, node_uuid: str) -> float | None:
        self._note(node_uuid, READ)
        return super().deploy_started_at(node_uuid)

    def deploy_callback_at(self, node_uuid: str) -> float | None:
        self._note(node_uuid, READ)
        return super().deploy_callback_at(node_uuid)

    def start_clean(self, node_uuid: str, now: float) -> float:
        self._note(node_uuid, WRITE)
        return super().start_clean(node_uuid, now)

    def clean_started_at(self, node_uuid: str) -> float | None:
        self._note(node_uuid, READ)
        return super().clean_started_at(node_uuid)

    def clean_done_at(self, node_uuid: str) -> float | None:
        self._note(node_uuid, READ)
        return super().clean_done_at(node_uuid)

    def machine(self, node_uuid: str) -> Machine:
        self._note(node_uuid, READ)
        return super().machine(node_uuid)

    # -- what survives a crash, for snapshots ---------------------------------------

    def state(self) -> tuple[dict[str, Machine], dict[Any, Any]]:
        machines = {uuid: Machine(**vars(machine)) for uuid, machine in self._machines.items()}
        return machines, dict(self._failures)

    def restore(self, state: tuple[dict[str, Machine], dict[Any, Any]]) -> None:
        machines, failures = state
        self._machines = {uuid: Machine(**vars(machine)) for uuid, machine in machines.items()}
        self._failures = dict(failures)


class ActorRandom(random.Random):
    """One random stream per actor, so ids and MACs do not depend on the interleaving.

    With one shared stream, two independent operations would swap their ids
    whenever they swap order, and every step that makes an id would conflict
    with every other. Each actor's stream is seeded by its name (and the
    incarnation it runs in), which the schedule fixes.
    """

    def __init__(self, salt: str) -> None:
        self._streams: dict[str, random.Random] = {}
        self._salt = salt
        self.incarnation = 0
        super().__init__(0)

    def _stream(self) -> random.Random:
        actor = Scheduler.current()
        key = f"{self._salt}/{self.incarnation}/{actor.name if actor is not None else '-'}"
        stream = self._streams.get(key)
        if stream is None:
            stream = self._streams[key] = random.Random(key)
        return stream

    def random(self) -> float:
        return self._stream().random()

    def getrandbits(self, k: int) -> int:
        return self._stream().getrandbits(k)
