"""Upstream bugs that Tether can emulate on request, each switched on by name.

An emulated bug makes Tether behave the way the upstream code in the seed
does and switches off every protection of Tether's that would hide its
symptom, the reconcilers included. The switches are chosen once, when a cloud
is built (``tether.emulation``); product code never asks whether one is on.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Bug(StrEnum):
    STALE_VIF_ON_TERMINATE = "stale-vif-on-terminate"
    MAC_KEPT_ON_UNBIND = "mac-kept-on-unbind"
    STUCK_BUILD_ON_NODE_TEARDOWN = "stuck-build-on-node-teardown"
    ZOMBIE_INTERFACE_ON_ATTACH_RACE = "zombie-interface-on-attach-race"
    ORPHAN_INTERNAL_PORTS = "orphan-internal-ports"

    @property
    def description(self) -> str:
        """What emulating the bug makes Tether do, in a line."""
        return _DESCRIPTIONS[self]

    @property
    def upstream(self) -> Upstream:
        return _UPSTREAM[self]

    @property
    def implies(self) -> frozenset[Bug]:
        """The other upstream bugs of the same release that this one's symptom needs."""
        return _IMPLIES.get(self, frozenset())


@dataclass(frozen=True)
class Upstream:
    """Where a bug was reported upstream, as its seed (``../shared/seeds/SEED.txt``) tells it.

    ``references`` holds only the bug and review links the seed itself quotes: the seeds are
    the reports' text without their own bug numbers, and a number guessed here would send
    whoever follows it to someone else's bug.
    """

    project: str
    seed: str
    title: str
    references: tuple[str, ...] = ()


_DESCRIPTIONS: dict[Bug, str] = {
    Bug.STALE_VIF_ON_TERMINATE: (
        "delete unplugs only the VIFs the info cache lists, the port-deleted event drops the cache "
        "entry before its detach, and tear-down leaves VIFs on the node"
    ),
    Bug.MAC_KEPT_ON_UNBIND: "unbinding a port from a bare-metal node keeps the NIC's MAC on it",
    Bug.STUCK_BUILD_ON_NODE_TEARDOWN: (
        "a node that vanishes during a build is taken for 'instance not found' and the instance stays in BUILD"
    ),
    Bug.ZOMBIE_INTERFACE_ON_ATTACH_RACE: (
        "the port-deleted event and cache refreshes are not synchronised with interface attach, "
        "and trust the info cache instead of the hypervisor"
    ),
    Bug.ORPHAN_INTERNAL_PORTS: (
        "replacing a stack's server detaches the ports the stack made for it and forgets them, "
        "even when the server failed: they are left behind, listed by nobody, holding the NIC's MAC "
        "(implies mac-kept-on-unbind)"
    ),
}

# Heat before its fix ran against the ironic of its time, whose unbind kept the NIC's MAC: the
# orphaned port then holds that MAC, and the seed's replacement cannot use the node that is free.
# Without it the orphan is only a leak, not the outage the seed reports.
_IMPLIES: dict[Bug, frozenset[Bug]] = {
    Bug.ORPHAN_INTERNAL_PORTS: frozenset({Bug.MAC_KEPT_ON_UNBIND}),
}

_UPSTREAM: dict[Bug, Upstream] = {
    Bug.STALE_VIF_ON_TERMINATE: Upstream(
        "nova", "000_c79f96149c9810e9", "VIFs not always detached from ironic nodes during termination",
        ("fix proposed and abandoned: https://review.openstack.org/537626",
         "maybe related: https://bugs.launchpad.net/ironic/+bug/1743652"),
    ),
    Bug.MAC_KEPT_ON_UNBIND: Upstream(
        "heat, ironic", "001_69ab14d43c265761", "Heat does not delete ports from failed instances",
        ("fix proposed: https://review.openstack.org/564104",),
    ),
    Bug.ORPHAN_INTERNAL_PORTS: Upstream(
        "heat", "001_69ab14d43c265761", "Heat does not delete ports from failed instances",
        ("fix proposed: https://review.openstack.org/564104",),
    ),
    Bug.STUCK_BUILD_ON_NODE_TEARDOWN: Upstream(
        "nova", "003_e0615a7365632c83",
        "Baremetal instance stuck in BUILD state following ironic node tear down or delete",
    ),
    Bug.ZOMBIE_INTERFACE_ON_ATTACH_RACE: Upstream(
        "nova", "004_ee389569d8146817", "nova may leak net interface in guest if port under attaching/deleting",
        ("fix proposed: https://review.opendev.org/c/openstack/nova/+/799606",),
    ),
}


class UnknownBug(ValueError):
    def __init__(self, name: str) -> None:
        super().__init__(
            f"Unknown bug {name!r}; `tether bugs list` prints the names: {', '.join(sorted(Bug))}"
        )


class Bugs:
    """The set of emulated bugs in force, with those they imply."""

    def __init__(self, names: list[str] | tuple[str, ...] | frozenset[str] = ()) -> None:
        asked = frozenset(parse_bug(name) for name in names)
        self.names: frozenset[Bug] = asked.union(*(bug.implies for bug in asked))


def parse_bug(name: str) -> Bug:
    try:
        return Bug(name)
    except ValueError:
        raise UnknownBug(name) from None
