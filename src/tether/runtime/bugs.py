"""Upstream bugs that Tether can emulate on request, each switched on by name.

An emulated bug makes Tether behave the way the upstream code in the seed
does and switches off every protection of Tether's that would hide its
symptom, the reconcilers included. The switches are chosen once, when a cloud
is built (``tether.emulation``); product code never asks whether one is on.
"""

from __future__ import annotations

from enum import StrEnum


class Bug(StrEnum):
    STALE_VIF_ON_TERMINATE = "stale-vif-on-terminate"
    MAC_KEPT_ON_UNBIND = "mac-kept-on-unbind"
    STUCK_BUILD_ON_NODE_TEARDOWN = "stuck-build-on-node-teardown"
    ZOMBIE_INTERFACE_ON_ATTACH_RACE = "zombie-interface-on-attach-race"

    @property
    def description(self) -> str:
        return _DESCRIPTIONS[self]


_DESCRIPTIONS: dict[Bug, str] = {
    Bug.STALE_VIF_ON_TERMINATE: (
        "seed 000: delete unplugs only the VIFs the info cache lists, the port-deleted "
        "event drops the cache entry before its detach, and tear-down leaves VIFs on the node"
    ),
    Bug.MAC_KEPT_ON_UNBIND: "seed 001: unbinding a port from a bare-metal node keeps the NIC's MAC on it",
    Bug.STUCK_BUILD_ON_NODE_TEARDOWN: (
        "seed 003: a node that vanishes during a build is taken for 'instance not found' "
        "and the instance stays in BUILD"
    ),
    Bug.ZOMBIE_INTERFACE_ON_ATTACH_RACE: (
        "seed 004: the port-deleted event and cache refreshes are not synchronised with "
        "interface attach, and trust the info cache instead of the hypervisor"
    ),
}


class UnknownBug(ValueError):
    def __init__(self, name: str) -> None:
        super().__init__(
            f"Unknown bug {name!r}; `tether bugs list` prints the names: {', '.join(sorted(Bug))}"
        )


class Bugs:
    """The set of emulated bugs in force."""

    def __init__(self, names: list[str] | tuple[str, ...] | frozenset[str] = ()) -> None:
        self.names: frozenset[Bug] = frozenset(parse_bug(name) for name in names)

    def __contains__(self, bug: Bug) -> bool:
        return bug in self.names

    def __bool__(self) -> bool:
        return bool(self.names)


def parse_bug(name: str) -> Bug:
    try:
        return Bug(name)
    except ValueError:
        raise UnknownBug(name) from None
