"""Neutron's attribute maps for routers (router, ext-gw-mode, extraroute) and floating IPs."""

from __future__ import annotations

from typing import Any

from tether.api.network.attributes import Attr, Resource, passthrough, to_boolean, to_string, to_uuid


def to_uuid_or_none(attr: str, value: Any) -> str | None:
    return None if value is None else to_uuid(attr, value)


def to_string_or_none(attr: str, value: Any) -> str | None:
    return None if value is None else to_string(attr, value)


def _common() -> tuple[Attr, ...]:
    return (
        Attr("tenant_id", "project_id", post=True, convert=to_string),
        Attr("project_id", "project_id", post=True, convert=to_string),
        Attr("description", "description", post=True, put=True, convert=to_string),
        Attr("tags", filter=False, sort=False),
        Attr("created_at", filter=False),
        Attr("updated_at", filter=False),
    )


ROUTER = Resource("router", "routers", (
    Attr("id", "id"),
    Attr("name", "name", post=True, put=True, convert=to_string),
    Attr("admin_state_up", "admin_state_up", post=True, put=True, convert=to_boolean),
    Attr("status", "status"),
    Attr("external_gateway_info", "external_gateway_info", post=True, put=True, convert=passthrough,
         filter=False, sort=False),
    Attr("routes", "routes", put=True, convert=passthrough, filter=False, sort=False),
    *_common(),
))

FLOATINGIP = Resource("floatingip", "floatingips", (
    Attr("id", "id"),
    Attr("floating_ip_address", "floating_ip_address", post=True, convert=to_string),
    Attr("subnet_id", "subnet_id", post=True, convert=to_uuid_or_none, visible=False, filter=False),
    Attr("floating_network_id", "floating_network_id", post=True, required=True, convert=to_uuid),
    Attr("router_id", "router_id"),
    Attr("port_id", "port_id", post=True, put=True, convert=to_uuid_or_none),
    Attr("fixed_ip_address", "fixed_ip_address", post=True, put=True, convert=to_string_or_none),
    Attr("status", "status"),
    *_common(),
))
