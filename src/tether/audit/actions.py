"""Each repair as the public API call a person would make; nothing else changes the cloud."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import Any

import openstack.connection

from tether.audit.findings import Repair

# neutron's default base_mac: the prefix its own fresh addresses have.
NEUTRON_BASE_MAC = "fa:16:3e"


def fresh_mac() -> str:
    return NEUTRON_BASE_MAC + "".join(f":{byte:02x}" for byte in secrets.token_bytes(3))


def _detach_vif(conn: openstack.connection.Connection, t: dict[str, str]) -> Any:
    return conn.baremetal.delete(f"/nodes/{t['node']}/vifs/{t['vif']}", microversion="1.28", raise_exc=True)


def _delete_port(conn: openstack.connection.Connection, t: dict[str, str]) -> Any:
    return conn.network.delete(f"/ports/{t['port']}", raise_exc=True)


def _release_port(conn: openstack.connection.Connection, t: dict[str, str]) -> Any:
    # rule 2 (seed 001): a user's port comes back unbound, its device cleared.
    body = {"port": {"device_id": "", "device_owner": "", "binding:host_id": ""}}
    return conn.network.put(f"/ports/{t['port']}", json=body, raise_exc=True)


def _reset_mac(conn: openstack.connection.Connection, t: dict[str, str]) -> Any:
    # rule 2 (seed 001): a MAC a bare-metal NIC imposed is reset to a fresh one.
    return conn.network.put(f"/ports/{t['port']}", json={"port": {"mac_address": fresh_mac()}}, raise_exc=True)


def _reset_state_error(conn: openstack.connection.Connection, t: dict[str, str]) -> Any:
    return conn.compute.post(f"/servers/{t['instance']}/action", json={"os-resetState": {"state": "error"}},
                             raise_exc=True)


def _hard_reboot(conn: openstack.connection.Connection, t: dict[str, str]) -> Any:
    return conn.compute.post(f"/servers/{t['instance']}/action", json={"reboot": {"type": "HARD"}},
                             raise_exc=True)


PERFORM: dict[str, Callable[[openstack.connection.Connection, dict[str, str]], Any]] = {
    "detach-vif": _detach_vif,
    "delete-port": _delete_port,
    "release-port": _release_port,
    "reset-mac": _reset_mac,
    "reset-state-error": _reset_state_error,
    "hard-reboot": _hard_reboot,
}


def perform(conn: openstack.connection.Connection, repair: Repair) -> None:
    PERFORM[repair.action](conn, repair.target)
