"""Paginated list calls against any OpenStack cloud through openstacksdk's sessions.

One list call per page, filtered on the server side and cut to the fields the analysis reads
(``fields=`` where the API has it: neutron, ironic). The raw bodies are returned; public_model maps
them. Each call is counted, so the report can say what the audit cost the cloud.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from keystoneauth1.adapter import Adapter

from tether.audit.public_model import Raw

COMPUTE_VERSION = "2.48"  # diagnostics' NIC details with MAC addresses
BAREMETAL_VERSION = "1.46"  # internal_info (1.18), portgroups' fields (1.23)
PAGE = 1000  # nova's osapi_max_limit and ironic's max_limit by default

PORT_FIELDS = ("id", "name", "network_id", "project_id", "mac_address", "status", "device_id", "device_owner",
               "binding:host_id", "fixed_ips", "created_at", "updated_at")
NODE_FIELDS = ("uuid", "name", "provision_state", "target_provision_state", "maintenance", "instance_uuid",
               "reservation", "provision_updated_at", "created_at", "updated_at")
NIC_FIELDS = ("uuid", "address", "node_uuid", "portgroup_uuid", "internal_info", "created_at", "updated_at")
PORTGROUP_FIELDS = ("uuid", "name", "address", "node_uuid", "internal_info", "created_at", "updated_at")


class CallCounter:
    def __init__(self) -> None:
        self.calls = 0


def _pages(adapter: Adapter, path: str, key: str, params: dict[str, Any], counter: CallCounter,
           microversion: str | None = None) -> Iterator[Raw]:
    """Every item of a collection, following the API's own next links (nova's ``KEY_links``, neutron's
    too, ironic's ``next``)."""
    url: str | None = path
    query: dict[str, Any] | None = {"limit": PAGE, **params}
    while url:
        counter.calls += 1
        response = adapter.get(url, params=query, microversion=microversion, raise_exc=True)
        body = response.json()
        yield from body.get(key) or []
        url = body.get("next") or next((link["href"] for link in body.get(f"{key}_links") or []
                                        if link.get("rel") == "next"), None)
        query = None  # a next link carries the whole query


def servers(adapter: Adapter, counter: CallCounter, **filters: Any) -> list[Raw]:
    return list(_pages(adapter, "/servers/detail", "servers", {"all_tenants": 1, **filters}, counter,
                       COMPUTE_VERSION))


def server(adapter: Adapter, counter: CallCounter, uuid: str) -> Raw | None:
    counter.calls += 1
    response = adapter.get(f"/servers/{uuid}", microversion=COMPUTE_VERSION, raise_exc=False)
    return _found(response, "server")


def diagnostics(adapter: Adapter, counter: CallCounter, uuid: str) -> Raw:
    counter.calls += 1
    return adapter.get(f"/servers/{uuid}/diagnostics", microversion=COMPUTE_VERSION, raise_exc=True).json()


def ports(adapter: Adapter, counter: CallCounter, **filters: Any) -> list[Raw]:
    return list(_pages(adapter, "/ports", "ports", {"fields": list(PORT_FIELDS), **filters}, counter))


def port(adapter: Adapter, counter: CallCounter, port_id: str) -> Raw | None:
    counter.calls += 1
    response = adapter.get(f"/ports/{port_id}", params={"fields": list(PORT_FIELDS)}, raise_exc=False)
    return _found(response, "port")


def nodes(adapter: Adapter, counter: CallCounter, **filters: Any) -> list[Raw]:
    return list(_pages(adapter, "/nodes", "nodes", {"fields": ",".join(NODE_FIELDS), **filters}, counter,
                       BAREMETAL_VERSION))


def node(adapter: Adapter, counter: CallCounter, ident: str) -> Raw | None:
    counter.calls += 1
    response = adapter.get(f"/nodes/{ident}", params={"fields": ",".join(NODE_FIELDS)},
                           microversion=BAREMETAL_VERSION, raise_exc=False)
    return _found(response, None)


def nics(adapter: Adapter, counter: CallCounter, **filters: Any) -> list[Raw]:
    return list(_pages(adapter, "/ports", "ports", {"fields": ",".join(NIC_FIELDS), **filters}, counter,
                       BAREMETAL_VERSION))


def portgroups(adapter: Adapter, counter: CallCounter, **filters: Any) -> list[Raw]:
    return list(_pages(adapter, "/portgroups", "portgroups", {"fields": ",".join(PORTGROUP_FIELDS), **filters},
                       counter, BAREMETAL_VERSION))


def _found(response: Any, key: str | None) -> Raw | None:
    if response.status_code == 404:
        return None
    response.raise_for_status()
    body = response.json()
    return body[key] if key else body
