"""A fake hypervisor: guest interfaces as ``virsh domiflist`` would show them, each guest's power
state (``virsh domstate``) and its serial console log (``virsh console``).

Its state lives here, not in the database, and survives a control-plane
crash (it is the hardware). It optionally persists to a journal file so a
restarted ``tether serve`` finds its guests where it left them.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from tether.domain.compute import GuestInterface
from tether.domain.events import GuestDevicePlugged, GuestDeviceUnplugged
from tether.drivers.journal import Journal


def device_name(port_id: str) -> str:
    return "tap" + port_id[:11]


class HypervisorError(Exception):
    pass


# nova's power_state numbers, as a guest's state maps to them
RUNNING, PAUSED, SHUTDOWN, SUSPENDED, NOSTATE = 1, 3, 4, 7, 0
CONSOLE_LINES = 200  # a guest's console log keeps its last lines, as a ring buffer file would


class FakeHypervisor:
    def __init__(self, path: Path | None = None, *, read_only: bool = False) -> None:
        self._journal = Journal(path, read_only=read_only) if path is not None else None
        self._interfaces: dict[tuple[str, str, str], GuestInterface] = {}
        self._domains: set[tuple[str, str]] = set()
        self._power: dict[tuple[str, str], int] = {}
        self._console: dict[tuple[str, str], list[str]] = {}
        self._report: Callable[[object], None] | None = None
        self._booted = time.monotonic()
        self._separate: set[str] = set()  # power and console records of an older journal, each its own
        self._load()

    def report_to(self, report: Callable[[object], None] | None) -> None:
        """Where each newly plugged or unplugged interface is reported (the L2 agent's view):
        the hardware outlives control planes, and tells whichever one is alive now."""
        self._report = report

    def uptime(self, host: str) -> str:
        """What ``uptime`` prints on a host (nova's libvirt driver reports exactly that); the fake's hosts
        came up with this process."""
        minutes = int(time.monotonic() - self._booted) // 60
        days, rest = divmod(minutes, 24 * 60)
        since = f"{days} day{'s' if days != 1 else ''}, {rest // 60:2d}:{rest % 60:02d}" if days else \
            (f"{rest // 60:2d}:{rest % 60:02d}" if rest >= 60 else f"{rest} min")
        return f" {time.strftime('%H:%M:%S')} up {since},  0 users,  load average: 0.00, 0.00, 0.00"

    # -- domains --------------------------------------------------------------

    def create_domain(self, host: str, instance_uuid: str) -> None:
        self._domains.add((host, instance_uuid))
        self.set_power(host, instance_uuid, RUNNING, "boot")

    def power(self, host: str, instance_uuid: str) -> int:
        """The guest's power state as nova numbers it; NOSTATE for no such guest."""
        if (host, instance_uuid) not in self._domains:
            return NOSTATE
        return self._power.get((host, instance_uuid), RUNNING)

    def set_power(self, host: str, instance_uuid: str, state: int, why: str) -> int:
        """Change a guest's power state (``why``: what did it, as the console shows it)."""
        key = (host, instance_uuid)
        if key not in self._domains:
            raise HypervisorError(f"Domain not found: no domain with matching uuid '{instance_uuid}'")
        self._power[key] = state
        self.write_console(host, instance_uuid, *_CONSOLE_LINES.get((why, state), (f"[tether] {why}",)))
        return state

    def write_console(self, host: str, instance_uuid: str, *lines: str) -> None:
        if not lines:
            return  # nothing to say (a boot with no user data): no journal write on the boot path
        key = (host, instance_uuid)
        log = self._console.setdefault(key, [])
        log.extend(lines)
        del log[:-CONSOLE_LINES]
        # one record per guest, its power state and console with it: a boot or a power change is one write
        self._record(_domain_key(host, instance_uuid), [host, instance_uuid, self._power.get(key, RUNNING), log])
        self._forget_separate(host, instance_uuid)

    def console_log(self, host: str, instance_uuid: str) -> list[str]:
        return list(self._console.get((host, instance_uuid), ()))

    def destroy_domain(self, host: str, instance_uuid: str) -> list[GuestInterface]:
        """Power off and undefine a guest; its interfaces go with it."""
        gone = self.interfaces(instance_uuid=instance_uuid, host=host)
        for interface in gone:
            del self._interfaces[(interface.host, interface.instance_uuid, interface.port_id)]
            self._record(_interface_key(interface), None)
        self._domains.discard((host, instance_uuid))
        self._power.pop((host, instance_uuid), None)
        self._console.pop((host, instance_uuid), None)
        self._record(_domain_key(host, instance_uuid), None)
        self._forget_separate(host, instance_uuid)
        if self._report is not None:
            for interface in gone:
                self._report(GuestDeviceUnplugged(interface.port_id))
        return gone

    def has_domain(self, host: str, instance_uuid: str) -> bool:
        return (host, instance_uuid) in self._domains

    def domains(self) -> list[tuple[str, str]]:
        return sorted(self._domains)

    # -- interfaces -------------------------------------------------------------

    def plug(self, host: str, instance_uuid: str, port_id: str, mac: str) -> GuestInterface:
        key = (host, instance_uuid, port_id)
        if key in self._interfaces:
            return self._interfaces[key]
        interface = GuestInterface(host, instance_uuid, device_name(port_id), mac, port_id)
        self._interfaces[key] = interface
        self._record(_interface_key(interface), asdict(interface))
        if self._report is not None:
            self._report(GuestDevicePlugged(interface.port_id))
        return interface

    def unplug(self, host: str, instance_uuid: str, port_id: str) -> bool:
        interface = self._interfaces.pop((host, instance_uuid, port_id), None)
        if interface is None:
            return False
        self._record(_interface_key(interface), None)
        if self._report is not None:
            self._report(GuestDeviceUnplugged(interface.port_id))
        return True

    def interfaces(
        self, instance_uuid: str | None = None, host: str | None = None
    ) -> list[GuestInterface]:
        return sorted(
            (
                interface
                for interface in self._interfaces.values()
                if (instance_uuid is None or interface.instance_uuid == instance_uuid)
                and (host is None or interface.host == host)
            ),
            key=lambda interface: (interface.host, interface.instance_uuid, interface.device),
        )

    # -- persistence ------------------------------------------------------------

    def _load(self) -> None:
        if self._journal is None:
            return
        for key, value in self._journal.load().items():
            if key.startswith("domain/"):
                self._domains.add((value[0], value[1]))
                if len(value) == 4:
                    self._power[(value[0], value[1])] = value[2]
                    self._console[(value[0], value[1])] = list(value[3])
            elif key.startswith("power/"):  # a journal written before power and console joined the domain's
                self._separate.add(key)
                self._power[(value[0], value[1])] = value[2]
            elif key.startswith("console/"):
                self._separate.add(key)
                self._console[(value[0], value[1])] = list(value[2])
            else:
                interface = GuestInterface(**value)
                self._interfaces[(interface.host, interface.instance_uuid, interface.port_id)] = interface

    def _forget_separate(self, host: str, instance_uuid: str) -> None:
        """An older journal's own power and console records of this guest: its domain's record holds them now."""
        for key in (_power_key(host, instance_uuid), _console_key(host, instance_uuid)):
            if key in self._separate:
                self._separate.discard(key)
                self._record(key, None)

    def _record(self, key: str, value: Any) -> None:
        if self._journal is not None:
            self._journal.put(key, value)


def _domain_key(host: str, instance_uuid: str) -> str:
    return f"domain/{host}/{instance_uuid}"


def _power_key(host: str, instance_uuid: str) -> str:
    return f"power/{host}/{instance_uuid}"


def _console_key(host: str, instance_uuid: str) -> str:
    return f"console/{host}/{instance_uuid}"


# What a guest writes on its serial console when its power changes (a cirros-like guest).
_CONSOLE_LINES: dict[tuple[str, int], tuple[str, ...]] = {
    ("boot", RUNNING): ("[    0.000000] Linux version 5.15.0 (tether fake guest)",
                        "[    0.412000] Run /init as init process",
                        "login as 'cirros' user. default password: 'gocubsgo'. use 'sudo' for root.",
                        "cirros login:"),
    ("stop", SHUTDOWN): ("[  OK  ] Reached target Power-Off.", "reboot: Power down"),
    ("reboot", RUNNING): ("reboot: Restarting system", "[    0.000000] Linux version 5.15.0 (tether fake guest)",
                          "cirros login:"),
}


def _interface_key(interface: GuestInterface) -> str:
    return f"interface/{interface.host}/{interface.instance_uuid}/{interface.port_id}"
