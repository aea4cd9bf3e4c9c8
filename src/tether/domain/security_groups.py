"""Security groups and their rules as neutron has them, and the pure checks of a rule.

The checks follow neutron's ``securitygroups_db`` in its order (canonical
forms first, then port range, remote prefix, ethertype against protocol, one
remote entity), so the same bad rule fails with the same words. Tether has
no data plane: the rules are stored, shown and applied to ports, and nothing
filters packets by them.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final

import netaddr

from tether.domain.errors import network as ne

DEFAULT_NAME: Final = "default"
DEFAULT_DESCRIPTION: Final = "Default security group"
_DEFAULT_GROUP_NAMESPACE = uuid.UUID("5b0f8a52-6d43-4c8e-9a36-8b1d3f7e2c10")
INGRESS, EGRESS = "ingress", "egress"
DIRECTIONS = (INGRESS, EGRESS)
IPV4, IPV6 = "IPv4", "IPv6"
ETHERTYPES = (IPV4, IPV6)

# neutron-lib's IP_PROTOCOL_MAP
IP_PROTOCOL_MAP: dict[str, int] = {
    "ah": 51, "dccp": 33, "egp": 8, "esp": 50, "gre": 47, "hopopt": 0, "icmp": 1, "igmp": 2, "ip": 0,
    "ipip": 4, "ipv6-encap": 41, "ipv6-frag": 44, "ipv6-icmp": 58, "icmpv6": 58, "ipv6-nonxt": 59,
    "ipv6-opts": 60, "ipv6-route": 43, "ospf": 89, "pgm": 113, "rsvp": 46, "sctp": 132, "tcp": 6,
    "udp": 17, "udplite": 136, "vrrp": 112,
}
PROTO_ANY = "any"
SUPPORTED_PROTOCOLS = (None, PROTO_ANY, *IP_PROTOCOL_MAP)
# The protocols whose rules may carry a port range (neutron's SG_PORT_PROTO_NAMES / _NUMS).
PORT_PROTOCOLS = ("dccp", "sctp", "tcp", "udp", "udplite")
PORT_PROTOCOL_NUMBERS = (33, 132, 6, 17, 136)
ICMP_NUMBERS = (1, 58)
IPV6_ICMP_LEGACY = ("icmp", "icmpv6")
# Protocols that only exist over IPv6: a rule for IPv4 with one of them is refused.
IPV6_ONLY = ("ipv6-encap", "ipv6-frag", "ipv6-icmp", "icmpv6", "ipv6-nonxt", "ipv6-opts", "ipv6-route",
             "41", "44", "58", "59", "60", "43")
PORT_MIN, PORT_MAX = 1, 65535


@dataclass
class SecurityGroup:
    id: str
    name: str
    project_id: str
    description: str = ""
    stateful: bool = True
    # the group neutron makes for each project on first use; at most one per project
    is_default: bool = False
    created_at: float = 0.0
    updated_at: float = 0.0


@dataclass
class SecurityGroupRule:
    id: str
    security_group_id: str
    project_id: str
    direction: str
    ethertype: str = IPV4
    protocol: str | None = None
    port_range_min: int | None = None
    port_range_max: int | None = None
    remote_ip_prefix: str | None = None
    remote_group_id: str | None = None
    description: str = ""
    created_at: float = 0.0
    updated_at: float = 0.0

    @property
    def normalized_cidr(self) -> str | None:
        if not self.remote_ip_prefix:
            return None
        return str(netaddr.IPNetwork(self.remote_ip_prefix).cidr)

    def key(self) -> str:
        """neutron's ``_rule_to_key``: two rules with one key are the same rule."""
        def norm(name: str, value: Any) -> str:
            if name == "remote_ip_prefix" and value in ("0.0.0.0/0", "::/0", None):
                return "+"
            if value is None:
                return "+"
            if name == "protocol":
                return str(protocol_name_and_number(value, self.ethertype))
            return str(value)

        names = ("direction", "ethertype", "port_range_max", "port_range_min", "protocol", "remote_group_id",
                 "remote_ip_prefix", "security_group_id")
        return "_".join(norm(name, getattr(self, name)) for name in names)


@lru_cache(maxsize=4096)  # a SHA-1 per port create and per server shown, of a handful of projects
def default_group_id(project_id: str) -> str:
    """The id of a project's default group, derived from the project: two first uses racing make one group,
    and the group is known by its id alone (its name is always "default": neutron refuses renaming it)."""
    return str(uuid.uuid5(_DEFAULT_GROUP_NAMESPACE, project_id))


def default_rules(group_id: str, *, default_group: bool) -> list[dict[str, Any]]:
    """neutron's default rule templates: egress anywhere for both ethertypes, and in the default group,
    ingress from members of the group itself."""
    rules: list[dict[str, Any]] = [{"direction": EGRESS, "ethertype": ethertype} for ethertype in ETHERTYPES]
    if default_group:
        rules += [{"direction": INGRESS, "ethertype": ethertype, "remote_group_id": group_id}
                  for ethertype in ETHERTYPES]
    return rules


# -- converting attributes (neutron's convert_to functions) ---------------------------------


def convert_protocol(value: Any) -> str | None:
    """``any`` and None mean every protocol; a name (any case) or a number 0..255 otherwise."""
    if value is None or value == PROTO_ANY:
        return None
    shown = [str(p) if p is not None else None for p in SUPPORTED_PROTOCOLS]
    if isinstance(value, bool):
        raise ne.SecurityGroupRuleInvalidProtocol(protocol=value, values=shown)
    try:
        number = int(value)
    except (TypeError, ValueError):
        if isinstance(value, str) and value.lower() in IP_PROTOCOL_MAP:
            return value.lower()
        raise ne.SecurityGroupRuleInvalidProtocol(protocol=value, values=shown) from None
    if 0 <= number <= 255:
        return str(value)
    raise ne.SecurityGroupRuleInvalidProtocol(protocol=value, values=shown)


def convert_ethertype(value: Any) -> str:
    if isinstance(value, str):
        for ethertype in ETHERTYPES:
            if ethertype.lower() == value.lower():
                return ethertype
    raise ne.SecurityGroupRuleInvalidEtherType(ethertype=value, values=list(ETHERTYPES))


def convert_port(value: Any) -> int | None:
    """oslo's ``is_valid_port``: an integer 0..65535, as a number or its digits."""
    if value is None:
        return None
    if not isinstance(value, bool):
        try:
            number = int(value)
        except (TypeError, ValueError):
            number = -1
        if 0 <= number <= 65535 and (isinstance(value, int) or str(value).strip().lstrip("+").isdigit()):
            return number
    raise ne.SecurityGroupInvalidPortValue(port=value)


def convert_ip_prefix(value: Any) -> str | None:
    if not value:
        return None
    try:
        return str(netaddr.IPNetwork(value))
    except (ValueError, TypeError, netaddr.AddrFormatError):
        raise ne.InvalidCIDR(input=value) from None


# -- checking a rule (neutron's _validate_base_security_group_rule_attributes) ----------------


def protocol_number(protocol: str | None) -> int | None:
    if protocol is None:
        return None
    return IP_PROTOCOL_MAP.get(protocol) if protocol in IP_PROTOCOL_MAP else int(protocol)


def protocol_name_and_number(protocol: str, ethertype: str | None) -> list[str]:
    protocol = str(protocol)
    if ethertype == IPV6:
        if protocol in IPV6_ICMP_LEGACY:
            protocol = "ipv6-icmp"
        elif protocol == "1":
            protocol = "58"
    if protocol in IP_PROTOCOL_MAP:
        return [protocol, str(IP_PROTOCOL_MAP[protocol])]
    by_number = {str(number): name for name, number in IP_PROTOCOL_MAP.items() if name not in ("ip", "icmpv6")}
    if protocol in by_number:
        return [by_number[protocol], protocol]
    return [protocol, protocol]


def canonical_rule(rule: dict[str, Any]) -> dict[str, Any]:
    """The rule as neutron stores it, or the typed error neutron raises for it."""
    rule = dict(rule)
    if rule.get("ethertype") == IPV6:
        if rule.get("protocol") in IPV6_ICMP_LEGACY:
            rule["protocol"] = "ipv6-icmp"
        elif rule.get("protocol") == "1":
            rule["protocol"] = "58"
    if rule.get("port_range_min") == PORT_MIN and rule.get("port_range_max") == PORT_MAX:
        # the whole range is no range
        rule["port_range_min"] = rule["port_range_max"] = None
    _check_port_range(rule)
    prefix = rule.get("remote_ip_prefix")
    if prefix:
        network = netaddr.IPNetwork(prefix)
        rule["remote_ip_prefix"] = str(network)
        if rule.get("ethertype") != f"IPv{network.version}":
            raise ne.SecurityGroupRuleParameterConflict(ethertype=rule.get("ethertype"), cidr=prefix)
    if rule.get("protocol") in IPV6_ONLY and rule.get("ethertype") == IPV4:
        raise ne.SecurityGroupEthertypeConflictWithProtocol(ethertype=IPV4, protocol=rule["protocol"])
    if rule.get("remote_ip_prefix") and rule.get("remote_group_id"):
        raise ne.SecurityGroupMultipleRemoteEntites()
    return rule


def _check_port_range(rule: dict[str, Any]) -> None:
    low, high = rule.get("port_range_min"), rule.get("port_range_max")
    if low is None and high is None:
        return
    if not rule.get("protocol"):
        raise ne.SecurityGroupProtocolRequiredWithPorts()
    number = protocol_number(rule["protocol"])
    if number in PORT_PROTOCOL_NUMBERS:
        if low == 0 or high == 0:
            raise ne.SecurityGroupInvalidPortValue(port=0)
        if low is None or high is None or low > high:
            raise ne.SecurityGroupInvalidPortRange()
    elif number in ICMP_NUMBERS:
        for value, attr, name in ((low, "port_range_min", "type"), (high, "port_range_max", "code")):
            if value is not None and not 0 <= value <= 255:
                raise ne.SecurityGroupInvalidIcmpValue(field=name, attr=attr, value=value)
        if low is None and high is not None:
            raise ne.SecurityGroupMissingIcmpType(value=high)
    else:
        raise ne.SecurityGroupInvalidProtocolForPort(
            protocol=number, valid_port_protocols=", ".join(name.upper() for name in PORT_PROTOCOLS))
