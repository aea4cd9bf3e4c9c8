"""Networks, subnets and ports as neutron shows them on the wire."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from tether.api.network.attributes import Resource
from tether.domain.network import Network, Port, Subnet
from tether.domain.routers import FloatingIp, Router
from tether.domain.security_groups import SecurityGroup, SecurityGroupRule
from tether.services.context import RequestContext


def timestamp(moment: float) -> str:
    """Neutron's standard-attr-timestamp format: whole seconds, UTC, with Z."""
    return datetime.fromtimestamp(moment, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _standard(entity: Any, tags: Iterable[str] = ()) -> dict[str, Any]:
    return {"description": entity.description, "tags": sorted(tags),
            "created_at": timestamp(entity.created_at), "updated_at": timestamp(entity.updated_at)}


def network_view(network: Network, subnet_ids: list[str], tags: Iterable[str] = ()) -> dict[str, Any]:
    return {
        "id": network.id, "name": network.name,
        "tenant_id": network.project_id, "project_id": network.project_id,
        "admin_state_up": network.admin_state_up, "status": network.status, "subnets": subnet_ids,
        "shared": network.shared, "router:external": network.external, "mtu": network.mtu,
        "provider:network_type": network.provider_network_type,
        "provider:physical_network": network.provider_physical_network,
        "provider:segmentation_id": network.provider_segmentation_id,
        "port_security_enabled": network.port_security_enabled,
        **_standard(network, tags),
    }


def subnet_view(subnet: Subnet, tags: Iterable[str] = ()) -> dict[str, Any]:
    return {
        "id": subnet.id, "name": subnet.name, "network_id": subnet.network_id,
        "tenant_id": subnet.project_id, "project_id": subnet.project_id,
        "ip_version": subnet.ip_version, "cidr": subnet.cidr, "gateway_ip": subnet.gateway_ip,
        "allocation_pools": [dict(pool) for pool in subnet.allocation_pools],
        "dns_nameservers": list(subnet.dns_nameservers),
        "host_routes": [dict(route) for route in subnet.host_routes or []],
        "enable_dhcp": subnet.enable_dhcp,
        "ipv6_ra_mode": subnet.ipv6_ra_mode, "ipv6_address_mode": subnet.ipv6_address_mode,
        "subnetpool_id": None,
        **_standard(subnet, tags),
    }


def port_view(port: Port, tags: Iterable[str] = ()) -> dict[str, Any]:
    return {
        "id": port.id, "name": port.name, "network_id": port.network_id,
        "tenant_id": port.project_id, "project_id": port.project_id,
        "mac_address": port.mac_address, "admin_state_up": port.admin_state_up, "status": port.status,
        "device_id": port.device_id, "device_owner": port.device_owner,
        "fixed_ips": [{"subnet_id": ip["subnet_id"], "ip_address": ip["ip_address"]} for ip in port.fixed_ips],
        "binding:host_id": port.binding_host_id, "binding:vnic_type": port.binding_vnic_type,
        "binding:profile": dict(port.binding_profile), "binding:vif_type": port.binding_vif_type,
        "binding:vif_details": {},
        "security_groups": list(port.security_group_ids or []),
        "allowed_address_pairs": [dict(pair) for pair in port.allowed_address_pairs or []],
        "extra_dhcp_opts": [dict(opt) for opt in port.extra_dhcp_opts or []],
        "port_security_enabled": port.port_security_enabled,
        **_standard(port, tags),
    }


def for_caller(resource: Resource, view: dict[str, Any], ctx: RequestContext,
               fields: Iterable[str] | None = None) -> dict[str, Any]:
    """What this caller may see of ``view`` (neutron's ``_exclude_attributes_by_policy``), cut to ``fields``."""
    hidden = () if ctx.is_admin else resource.admin_only
    wanted = None if not fields else set(fields)
    return {name: value for name, value in view.items()
            if name not in hidden and (wanted is None or name in wanted)}


def security_group_rule_view(rule: SecurityGroupRule) -> dict[str, Any]:
    return {
        "id": rule.id, "security_group_id": rule.security_group_id,
        "tenant_id": rule.project_id, "project_id": rule.project_id,
        "direction": rule.direction, "ethertype": rule.ethertype, "protocol": rule.protocol,
        "port_range_min": rule.port_range_min, "port_range_max": rule.port_range_max,
        "remote_ip_prefix": rule.remote_ip_prefix, "normalized_cidr": rule.normalized_cidr,
        "remote_group_id": rule.remote_group_id,
        **_standard(rule),
    }


def security_group_view(group: SecurityGroup, rules: list[SecurityGroupRule],
                        tags: Iterable[str] = ()) -> dict[str, Any]:
    return {
        "id": group.id, "name": group.name, "tenant_id": group.project_id, "project_id": group.project_id,
        "stateful": group.stateful,
        "security_group_rules": [security_group_rule_view(rule) for rule in rules],
        **_standard(group, tags),
    }


def router_view(router: Router, gateway: Port | None, tags: Iterable[str] = ()) -> dict[str, Any]:
    info = None
    if router.gateway_network_id is not None:
        info = {"network_id": router.gateway_network_id, "enable_snat": router.enable_snat,
                "external_fixed_ips": [{"subnet_id": ip["subnet_id"], "ip_address": ip["ip_address"]}
                                       for ip in (gateway.fixed_ips if gateway is not None else [])]}
    return {
        "id": router.id, "name": router.name, "tenant_id": router.project_id, "project_id": router.project_id,
        "admin_state_up": router.admin_state_up, "status": router.status, "external_gateway_info": info,
        "routes": [dict(route) for route in router.routes or []],
        **_standard(router, tags),
    }


def floatingip_view(fip: FloatingIp, tags: Iterable[str] = ()) -> dict[str, Any]:
    return {
        "id": fip.id, "tenant_id": fip.project_id, "project_id": fip.project_id,
        "floating_network_id": fip.floating_network_id, "floating_ip_address": fip.floating_ip_address,
        "router_id": fip.router_id, "port_id": fip.port_id, "fixed_ip_address": fip.fixed_ip_address,
        "status": fip.status,
        **_standard(fip, tags),
    }
