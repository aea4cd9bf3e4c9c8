"""Neutron's attribute maps for security groups and their rules (extensions/securitygroup.py)."""

from __future__ import annotations

from typing import Any

from tether.api.network.attributes import Attr, Resource, to_boolean, to_string
from tether.domain import security_groups as sg
from tether.services.network import validation


def to_direction(attr: str, value: Any) -> str:
    return validation.one_of(attr, value, sg.DIRECTIONS)  # type: ignore[no-any-return]


def to_protocol(attr: str, value: Any) -> str | None:
    return sg.convert_protocol(value)


def to_ethertype(attr: str, value: Any) -> str:
    return sg.convert_ethertype(value)


def to_port(attr: str, value: Any) -> int | None:
    return sg.convert_port(value)


def to_ip_prefix(attr: str, value: Any) -> str | None:
    return sg.convert_ip_prefix(value)


def to_group_id(attr: str, value: Any) -> str | None:
    return None if value is None else validation.string(attr, value)


def _project_and_times() -> tuple[Attr, ...]:
    return (
        Attr("tenant_id", "project_id", post=True, convert=to_string),
        Attr("project_id", "project_id", post=True, convert=to_string),
        Attr("description", "description", post=True, put=True, convert=to_string),
        Attr("created_at", filter=False),
        Attr("updated_at", filter=False),
    )


SECURITY_GROUP = Resource("security_group", "security_groups", (
    Attr("id", "id"),
    Attr("name", "name", post=True, put=True, convert=to_string),
    Attr("stateful", "stateful", post=True, put=True, convert=to_boolean),
    Attr("security_group_rules", filter=False, sort=False),
    Attr("tags", filter=False, sort=False),
    *_project_and_times(),
))

SECURITY_GROUP_RULE = Resource("security_group_rule", "security_group_rules", (
    Attr("id", "id"),
    Attr("security_group_id", "security_group_id", post=True, required=True, convert=to_string),
    Attr("remote_group_id", "remote_group_id", post=True, convert=to_group_id),
    Attr("direction", "direction", post=True, required=True, convert=to_direction),
    Attr("protocol", "protocol", post=True, convert=to_protocol),
    Attr("port_range_min", "port_range_min", post=True, convert=to_port),
    Attr("port_range_max", "port_range_max", post=True, convert=to_port),
    Attr("ethertype", "ethertype", post=True, convert=to_ethertype),
    Attr("remote_ip_prefix", "remote_ip_prefix", post=True, convert=to_ip_prefix),
    Attr("normalized_cidr", sort=False),
    *_project_and_times(),
))

# What a new rule is when the body does not say (the attribute map's defaults).
RULE_DEFAULTS: dict[str, Any] = {"ethertype": sg.IPV4, "protocol": None, "port_range_min": None,
                                 "port_range_max": None, "remote_ip_prefix": None, "remote_group_id": None}
