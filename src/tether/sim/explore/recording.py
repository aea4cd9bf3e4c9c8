"""Instruments that note what each step touches, outside the services' own code.

The explorer wraps what actors share: the lock table, the conductor's job
table, the scenario's names, the hypervisor and the bare-metal hardware.
Each wrapper reports to a ``Recorder``, which files the access under the
step being run; between explored steps (seeding, the verdict) nothing is
recorded. The store is watched separately (``store_footprint``).

The recorder also keeps, for each actor, a digest of everything it has read
(its *history*): every value a wrapper hands back, every row and row count
the store returns, the time, whether a wait was woken. Actors are
deterministic, so two actors with the same name and history are in the same
state; the explorer keys the states it has explored by them
(``ExploredRun.state_key``).
"""

from __future__ import annotations

import hashlib
import itertools
import random
import re
from collections.abc import Hashable, Iterator
from contextlib import contextmanager
from typing import Any

from tether.domain.compute import GuestInterface
from tether.drivers.hardware import FakeHardware, Machine
from tether.drivers.hypervisor import FakeHypervisor
from tether.runtime.clock import VirtualClock
from tether.sim.explore.footprint import ANY, READ, WRITE, Footprint
from tether.sim.scheduler import Actor, Scheduler

# Random values that no decision rests on; the store's logical digest and the histories leave them out.
RANDOM_COLUMNS = frozenset({"request_id", "password_hash"})
REQUEST_ID = re.compile(r"req-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def _identity_only(text: str) -> bool:
    """Whether a repr shows an object's address rather than a value."""
    return " at 0x" in text


class Recorder:
    """Files every access under the footprint of the step being run, and what it read in its history."""

    def __init__(self) -> None:
        self.current: Footprint | None = None
        self.actor: str | None = None  # whose step is being run
        self.recording = True  # False while a step whose footprint is known already runs again
        self.busy = False  # set while the recorder itself reads the store
        self.histories: dict[str, bytes] = {}
        self._turn: list[str] = []  # what the running step has read so far
        # Objects without a value of their own (tokens, owners), named once: (object, name) by id.
        # Keeping the object keeps its id from being reused by another one.
        self._names: dict[int, tuple[object, str]] = {}
        self._fresh = itertools.count()

    @contextmanager
    def unseen(self) -> Iterator[None]:
        """Reads made meanwhile are the harness's own (a reply's state): no step touched them."""
        busy, self.busy = self.busy, True
        try:
            yield
        finally:
            self.busy = busy

    @property
    def footprint(self) -> Footprint | None:
        """The footprint to file accesses under, if the running step's is being recorded."""
        return self.current if self.recording and not self.busy else None

    def touch(self, space: str, key: Hashable, mode: str) -> None:
        if self.current is not None and self.recording and not self.busy:
            self.current.touch(space, key, mode)

    # -- histories ---------------------------------------------------------------

    def new_schedule(self) -> None:
        self.histories = {}
        self.current, self.actor, self._turn = None, None, []

    def begin_step(self, actor: str, footprint: Footprint, *, recording: bool = True) -> None:
        self.current, self.actor, self._turn = footprint, actor, []
        self.recording = recording

    def end_step(self) -> None:
        """Fold the step's reads into its actor's history, unless the step was a loop's idle turn."""
        if self.current is not None and self.actor is not None and self.current.stutter is None:
            self.histories[self.actor] = self._fold(self.actor, self._turn)
        self.current, self.actor, self._turn = None, None, []
        self.recording = True

    def spawned(self, name: str) -> None:
        """A new actor starts from what its parent knew when it made it (its arguments)."""
        self.histories[name] = self._fold(self.actor, [*self._turn, f"spawn {name}"])

    def _fold(self, actor: str | None, turn: list[str]) -> bytes:
        before = self.histories.get(actor, b"") if actor is not None else b""
        text = REQUEST_ID.sub("req-*", "\x1f".join(turn))
        return hashlib.blake2b(before + text.encode(), digest_size=16).digest()

    def observe(self, value: Any) -> Any:
        """Note that the running step read ``value``; returns it."""
        if self.current is not None and not self.busy:
            self._turn.append(self.label(value))
        return value

    def label(self, value: Any) -> str:
        """A text for ``value`` that two runs share exactly when the value means the same in both."""
        if isinstance(value, Actor):
            return f"actor {value.name}"
        named = self._names.get(id(value))
        if named is not None and named[0] is value:
            return named[1]
        text = repr(value)
        if _identity_only(text):  # unique to this object
            text = f"object {next(self._fresh)}"
            self._names[id(value)] = (value, text)
        return text

    def name_made(self, value: Any) -> None:
        """Name an identity-only object by who made it, in what state: the same in two runs that agree."""
        if self.current is None or self.actor is None or not _identity_only(repr(value)):
            return
        if id(value) in self._names and self._names[id(value)][0] is value:
            return
        where = self._fold(self.actor, self._turn).hex()
        self._names[id(value)] = (value, f"made by {self.actor} at {where}")

    def guard(self, key: Hashable) -> None:
        """The step ends in a memoryless loop's wait for ``key`` (``Runtime.wait``'s ``guard``)."""
        if self.current is not None and self.recording:
            self.current.guard = key


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
        return self._recorder.observe(super().__contains__(key))  # type: ignore[no-any-return]

    def __getitem__(self, key: Hashable) -> Any:
        self._note(key, READ)
        return self._recorder.observe(super().__getitem__(key))

    def get(self, key: Hashable, default: Any = None) -> Any:
        self._note(key, READ)
        return self._recorder.observe(super().get(key, default))

    def __setitem__(self, key: Hashable, value: Any) -> None:
        self._note(key, WRITE)
        self._recorder.name_made(value)
        super().__setitem__(key, value)

    def __delitem__(self, key: Hashable) -> None:
        self._note(key, WRITE)
        super().__delitem__(key)

    def pop(self, key: Hashable, *default: Any) -> Any:
        self._note(key, WRITE)
        return self._recorder.observe(super().pop(key, *default))

    def setdefault(self, key: Hashable, default: Any = None) -> Any:
        self._note(key, WRITE)
        self._recorder.name_made(default)
        return self._recorder.observe(super().setdefault(key, default))

    def _everything(self) -> None:
        self._note(ANY, READ)
        self._recorder.observe(sorted((repr(key), self._recorder.label(value)) for key, value in super().items()))

    def __iter__(self) -> Iterator[Any]:
        self._everything()
        return super().__iter__()

    def __len__(self) -> int:
        self._everything()
        return super().__len__()

    def keys(self):  # type: ignore[no-untyped-def]
        self._everything()
        return super().keys()

    def values(self):  # type: ignore[no-untyped-def]
        self._everything()
        return super().values()

    def items(self):  # type: ignore[no-untyped-def]
        self._everything()
        return super().items()


# What the hypervisor holds that survives a crash: interfaces, and each domain with its power state.
GuestsState = tuple[dict[tuple[str, str, str], GuestInterface], set[tuple[str, str, "int | None"]]]


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
        return self._recorder.observe(super().destroy_domain(host, instance_uuid))  # type: ignore[no-any-return]

    def has_domain(self, host: str, instance_uuid: str) -> bool:
        self._note(instance_uuid, READ)
        return self._recorder.observe(super().has_domain(host, instance_uuid))  # type: ignore[no-any-return]

    def domains(self) -> list[tuple[str, str]]:
        self._note(None, READ)
        return self._recorder.observe(super().domains())  # type: ignore[no-any-return]

    def plug(self, host: str, instance_uuid: str, port_id: str, mac: str) -> GuestInterface:
        self._note(instance_uuid, WRITE)
        return self._recorder.observe(super().plug(host, instance_uuid, port_id, mac))  # type: ignore[no-any-return]

    def unplug(self, host: str, instance_uuid: str, port_id: str) -> bool:
        self._note(instance_uuid, WRITE)
        return self._recorder.observe(super().unplug(host, instance_uuid, port_id))  # type: ignore[no-any-return]

    def interfaces(self, instance_uuid: str | None = None, host: str | None = None) -> list[GuestInterface]:
        self._note(instance_uuid, READ)
        return self._recorder.observe(super().interfaces(instance_uuid, host))  # type: ignore[no-any-return]

    def power(self, host: str, instance_uuid: str) -> int:
        self._note(instance_uuid, READ)
        return self._recorder.observe(super().power(host, instance_uuid))  # type: ignore[no-any-return]

    def set_power(self, host: str, instance_uuid: str, state: int, why: str) -> int:
        self._note(instance_uuid, WRITE)
        return super().set_power(host, instance_uuid, state, why)

    def write_console(self, host: str, instance_uuid: str, *lines: str) -> None:
        if lines:  # no lines write nothing: such a step commutes with every other
            self._note(instance_uuid, WRITE)
        super().write_console(host, instance_uuid, *lines)

    def console_log(self, host: str, instance_uuid: str) -> list[str]:
        self._note(instance_uuid, READ)
        return self._recorder.observe(super().console_log(host, instance_uuid))  # type: ignore[no-any-return]

    # -- what survives a crash, for snapshots ---------------------------------------

    def state(self) -> GuestsState:
        """Interfaces and domains, each domain with its power state (what the digest counts)."""
        return dict(self._interfaces), {(host, uuid, self._power.get((host, uuid))) for host, uuid in self._domains}

    def restore(self, state: GuestsState) -> None:
        interfaces, domains = state
        self._interfaces = dict(interfaces)
        self._domains = {(host, uuid) for host, uuid, _ in domains}
        self._power = {(host, uuid): power for host, uuid, power in domains if power is not None}
        self._console = {}


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
        return self._recorder.observe(super().power_state(node_uuid))  # type: ignore[no-any-return]

    def set_power(self, node_uuid: str, on: bool) -> str:
        self._note(node_uuid, WRITE)
        return self._recorder.observe(super().set_power(node_uuid, on))  # type: ignore[no-any-return]

    def start_deploy(self, node_uuid: str, now: float) -> float:
        self._note(node_uuid, WRITE)
        return self._recorder.observe(super().start_deploy(node_uuid, now))  # type: ignore[no-any-return]

    def deploy_started_at(self, node_uuid: str) -> float | None:
        self._note(node_uuid, READ)
        return self._recorder.observe(super().deploy_started_at(node_uuid))  # type: ignore[no-any-return]

    def deploy_callback_at(self, node_uuid: str) -> float | None:
        self._note(node_uuid, READ)
        return self._recorder.observe(super().deploy_callback_at(node_uuid))  # type: ignore[no-any-return]

    def start_clean(self, node_uuid: str, now: float) -> float:
        self._note(node_uuid, WRITE)
        return self._recorder.observe(super().start_clean(node_uuid, now))  # type: ignore[no-any-return]

    def clean_started_at(self, node_uuid: str) -> float | None:
        self._note(node_uuid, READ)
        return self._recorder.observe(super().clean_started_at(node_uuid))  # type: ignore[no-any-return]

    def clean_done_at(self, node_uuid: str) -> float | None:
        self._note(node_uuid, READ)
        return self._recorder.observe(super().clean_done_at(node_uuid))  # type: ignore[no-any-return]

    def machine(self, node_uuid: str) -> Machine:
        self._note(node_uuid, READ)
        return self._recorder.observe(super().machine(node_uuid))  # type: ignore[no-any-return]

    # -- what survives a crash, for snapshots ---------------------------------------

    def state(self) -> tuple[dict[str, Machine], dict[Any, Any]]:
        machines = {uuid: Machine(**vars(machine)) for uuid, machine in self._machines.items()}
        return machines, dict(self._failures)

    def restore(self, state: tuple[dict[str, Machine], dict[Any, Any]]) -> None:
        machines, failures = state
        self._machines = {uuid: Machine(**vars(machine)) for uuid, machine in machines.items()}
        self._failures = dict(failures)


class RecordingClock(VirtualClock):
    """Virtual time, each reading of it part of the reader's history."""

    def __init__(self, recorder: Recorder, start: float) -> None:
        super().__init__(start)
        self._recorder = recorder

    def now(self) -> float:
        return self._recorder.observe(super().now())  # type: ignore[no-any-return]


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
