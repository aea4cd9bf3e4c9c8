"""A port's binding and status, and what moves them, as one table.

A port is unbound (no host) or bound to a host; its status is DOWN until the
L2 agent on that host sees its device (ACTIVE), and DOWN again when the device
goes, the port is bound elsewhere, or it is unbound. A bare-metal port has no
agent: networking-baremetal's mechanism driver marks it ACTIVE as soon as it
is bound with the switch port it is wired to (``local_link_information``),
and an unbind takes it back to DOWN. Every write of a port's binding or
status goes through ``next_state``.
"""

from __future__ import annotations

from typing import Any

from tether.domain.network import ACTIVE, BUILD, DOWN, PORT_STATUSES
from tether.domain.state_machine import IllegalTransition

UNBOUND = "unbound"
BOUND = "bound"

PortState = tuple[str, str]  # (binding, status)

TRANSITIONS: dict[tuple[str, str, str], PortState] = {
    # bound to a host it was not bound to: ACTIVE again only once that host's agent sees the device
    **{(binding, status, "bind"): (BOUND, DOWN) for binding in (UNBOUND, BOUND) for status in PORT_STATUSES},
    # bound again to the host it has: nothing is replugged
    **{(BOUND, status, "rebind"): (BOUND, status) for status in PORT_STATUSES},
    **{(binding, status, "unbind"): (UNBOUND, DOWN) for binding in (UNBOUND, BOUND) for status in PORT_STATUSES},
    # what the L2 agent reports; an unbound port's device is nobody's to report
    (BOUND, DOWN, "plugged"): (BOUND, ACTIVE),
    (BOUND, BUILD, "plugged"): (BOUND, ACTIVE),
    (BOUND, ACTIVE, "plugged"): (BOUND, ACTIVE),
    **{(binding, status, "unplugged"): (binding, DOWN) for binding in (UNBOUND, BOUND) for status in PORT_STATUSES},
    # networking-baremetal: bound with the switch port it is wired to, the port is up
    **{(BOUND, status, "wired"): (BOUND, ACTIVE) for status in PORT_STATUSES},
}


class IllegalPortTransition(IllegalTransition):
    def __init__(self, binding: str, status: str, event: str) -> None:
        super().__init__("port binding", f"{binding}/{status}", event)


def binding_of(host_id: str) -> str:
    return BOUND if host_id else UNBOUND


def next_state(host_id: str, status: str, event: str) -> PortState:
    """The (binding, status) that ``event`` leads to from a port bound to ``host_id`` ('' for none)."""
    binding = binding_of(host_id)
    try:
        return TRANSITIONS[(binding, status, event)]
    except KeyError:
        raise IllegalPortTransition(binding, status, event) from None


def can(host_id: str, status: str, event: str) -> bool:
    return (binding_of(host_id), status, event) in TRANSITIONS


def is_wired(vnic_type: str, host_id: str, profile: dict[str, Any] | None) -> bool:
    """A bare-metal port bound with the switch port it is wired to (what networking-baremetal binds)."""
    links = (profile or {}).get("local_link_information")
    return vnic_type == "baremetal" and bool(host_id) and bool(links)
