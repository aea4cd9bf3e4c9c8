"""Upstream bugs that Tether can emulate on request, each switched on by name.

An emulated bug makes Tether behave the way the upstream code in the seed
does and switches off every protection of Tether's that would hide its
symptom, the reconcilers included.
"""

from __future__ import annotations

BUGS: dict[str, str] = {
    "stale-vif-on-terminate": (
        "seed 000: delete unplugs only the VIFs the info cache lists, the port-deleted "
        "event drops the cache entry before its detach, and tear-down leaves VIFs on the node"
    ),
    "mac-kept-on-unbind": (
        "seed 001: unbinding a port from a bare-metal node keeps the NIC's MAC on it"
    ),
    "stuck-build-on-node-teardown": (
        "seed 003: a node that vanishes during a build is taken for 'instance not found' "
        "and the instance stays in BUILD"
    ),
    "zombie-interface-on-attach-race": (
        "seed 004: the port-deleted event and cache refreshes are not synchronised with "
        "interface attach, and trust the info cache instead of the hypervisor"
    ),
}


class UnknownBug(ValueError):
    def __init__(self, name: str) -> None:
        super().__init__(
            f"Unknown bug {name!r}; `tether bugs list` prints the names: {', '.join(sorted(BUGS))}"
        )


class Bugs:
    """The set of emulated bugs in force."""

    def __init__(self, names: list[str] | tuple[str, ...] | frozenset[str] = ()) -> None:
        for name in names:
            if name not in BUGS:
                raise UnknownBug(name)
        self.names = frozenset(names)

    def __contains__(self, name: str) -> bool:
        if name not in BUGS:
            raise UnknownBug(name)
        return name in self.names

    def __bool__(self) -> bool:
        return bool(self.names)
