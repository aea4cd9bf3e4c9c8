"""Fake bare-metal hardware: power, deploy and cleaning timing, and a BMC that can fail.

Its state lives here, not in the database, and survives a control-plane crash
(it is the hardware). It is time-based rather than task-based: starting a
deploy records when the ramdisk will call back, starting a clean when it will
be done, so a restarted control plane resumes from the hardware's truth
instead of from a task that died with the old process. It optionally
persists to a JSON file so a restarted ``tether serve`` finds it as it was.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from pathlib import Path

from tether.domain.baremetal_states import POWER_OFF, POWER_ON
from tether.drivers.journal import Journal

ACTIONS = ("power", "deploy", "clean")


class HardwareError(Exception):
    """The BMC (or the ramdisk) refused or failed an action."""


@dataclass
class Machine:
    power_state: str = POWER_OFF
    deploy_started_at: float | None = None
    deploy_callback_at: float | None = None
    clean_started_at: float | None = None
    clean_done_at: float | None = None
    # What the BMC boots next (ironic's management interface), and whether it keeps it.
    boot_device: str = "pxe"
    boot_persistent: bool = False


@dataclass(frozen=True)  # frozen: a snapshot's copy of the table must not count down with the live one
class _Failure:
    times: int
    message: str


class FakeHardware:
    """``new_machines_clean``: a machine that was never deployed nor cleaned has nothing on its disks
    to wipe, so its first clean is done at once (``tether serve``'s demo nodes are usable as soon as
    they are provided); every later clean takes ``clean_seconds``."""

    def __init__(
        self, *, deploy_seconds: float = 10.0, clean_seconds: float = 5.0, path: Path | None = None,
        new_machines_clean: bool = False, read_only: bool = False,
    ) -> None:
        if deploy_seconds < 0 or clean_seconds < 0:
            raise ValueError("deploy_seconds and clean_seconds must not be negative")
        self.deploy_seconds = deploy_seconds
        self.clean_seconds = clean_seconds
        self.new_machines_clean = new_machines_clean
        self._journal = Journal(path, read_only=read_only) if path is not None else None
        self._machines: dict[str, Machine] = {}
        self._failures: dict[tuple[str, str], _Failure] = {}
        self._load()

    # -- faults -------------------------------------------------------------------

    def fail(self, node_uuid: str, action: str, times: int = 1, message: str | None = None) -> None:
        """Make the next ``times`` calls of ``action`` on this node raise HardwareError."""
        if action not in ACTIONS:
            raise ValueError(f"Unknown hardware action {action!r}; expected one of {', '.join(ACTIONS)}")
        if times < 1:
            raise ValueError("times must be at least 1")
        self._failures[(node_uuid, action)] = _Failure(times, message or f"IPMI call failed: {action}.")

    def _check(self, node_uuid: str, action: str) -> None:
        failure = self._failures.get((node_uuid, action))
        if failure is None:
            return
        if failure.times <= 1:
            del self._failures[(node_uuid, action)]
        else:
            self._failures[(node_uuid, action)] = replace(failure, times=failure.times - 1)
        raise HardwareError(failure.message)

    # -- power --------------------------------------------------------------------

    def power_state(self, node_uuid: str) -> str:
        machine = self._machines.get(node_uuid)
        return machine.power_state if machine is not None else POWER_OFF

    def set_power(self, node_uuid: str, on: bool) -> str:
        self._check(node_uuid, "power")
        machine = self._machine(node_uuid)
        machine.power_state = POWER_ON if on else POWER_OFF
        self._save(node_uuid)
        return machine.power_state

    # -- boot device --------------------------------------------------------------

    def boot_device(self, node_uuid: str) -> tuple[str, bool]:
        """The device the node boots next, and whether that persists."""
        machine = self._machines.get(node_uuid, Machine())
        return machine.boot_device, machine.boot_persistent

    def set_boot_device(self, node_uuid: str, device: str, persistent: bool) -> None:
        machine = self._machine(node_uuid)
        machine.boot_device, machine.boot_persistent = device, persistent
        self._save(node_uuid)

    # -- deploy -------------------------------------------------------------------

    def start_deploy(self, node_uuid: str, now: float) -> float:
        """Boot the deploy ramdisk; returns when it will call back."""
        self._check(node_uuid, "deploy")
        machine = self._machine(node_uuid)
        machine.deploy_started_at = now
        machine.deploy_callback_at = now + self.deploy_seconds
        self._save(node_uuid)
        return machine.deploy_callback_at

    def deploy_started_at(self, node_uuid: str) -> float | None:
        machine = self._machines.get(node_uuid)
        return machine.deploy_started_at if machine is not None else None

    def deploy_callback_at(self, node_uuid: str) -> float | None:
        """When the ramdisk of the current deploy calls back; None when no deploy is under way."""
        machine = self._machines.get(node_uuid)
        return machine.deploy_callback_at if machine is not None else None

    # -- cleaning -----------------------------------------------------------------

    def start_clean(self, node_uuid: str, now: float) -> float:
        """Wipe the disks; returns when cleaning will be done. The deployed image is gone."""
        self._check(node_uuid, "clean")
        machine = self._machine(node_uuid)
        wiped = self.new_machines_clean and machine.clean_started_at is None and machine.deploy_started_at is None
        machine.deploy_started_at = machine.deploy_callback_at = None
        machine.clean_started_at = now
        machine.clean_done_at = now if wiped else now + self.clean_seconds
        self._save(node_uuid)
        return machine.clean_done_at

    def clean_started_at(self, node_uuid: str) -> float | None:
        machine = self._machines.get(node_uuid)
        return machine.clean_started_at if machine is not None else None

    def clean_done_at(self, node_uuid: str) -> float | None:
        machine = self._machines.get(node_uuid)
        return machine.clean_done_at if machine is not None else None

    # -- state ----------------------------------------------------------------------

    def machine(self, node_uuid: str) -> Machine:
        """A copy of what the hardware knows about one node."""
        return Machine(**asdict(self._machines.get(node_uuid, Machine())))

    def _machine(self, node_uuid: str) -> Machine:
        return self._machines.setdefault(node_uuid, Machine())

    def _load(self) -> None:
        if self._journal is not None:
            self._machines = {uuid: Machine(**state) for uuid, state in self._journal.load().items()}

    def _save(self, node_uuid: str) -> None:
        if self._journal is not None:
            self._journal.put(node_uuid, asdict(self._machines[node_uuid]))
