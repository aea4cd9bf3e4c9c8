"""What a port carries besides its addresses: security groups, port security, allowed address pairs and
extra DHCP options, each checked in neutron-lib's words before any transaction opens."""

from __future__ import annotations

from typing import Any

import netaddr

from tether.domain.errors.network import (
    AllowedAddressPairExhausted,
    AllowedAddressPairsMissingIP,
    AttributeRefused,
    DuplicateAddressPairInRequest,
    InvalidAttribute,
    InvalidInput,
)
from tether.services.network import validation

# neutron's max_allowed_address_pair default
MAX_ADDRESS_PAIRS = 10
# neutron-lib's extra_dhcp_opt definition
BLANK_ALLOWED_OPTS = ("router", "classless-static-route")
OPT_NAME_MAX, OPT_VALUE_MAX = 64, 255


def security_group_ids(value: object) -> list[str]:
    """neutron's ``convert_none_to_empty_list`` then ``type:uuid_list``."""
    if value is None:
        return []
    ids = validation.list_of("security_groups", value)
    for group_id in ids:
        validation.uuid("security_groups", group_id)
    duplicates = sorted({group_id for group_id in ids if ids.count(group_id) > 1})
    if duplicates:
        raise InvalidAttribute(attr="security_groups", reason=f"Duplicate items in the list: '{', '.join(duplicates)}'")
    return list(ids)


def address_pairs(value: object) -> list[dict[str, str]]:
    """neutron-lib's ``_validate_allowed_address_pairs``, in its order and words."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise AttributeRefused(reason="Allowed address pairs must be a list.")
    if len(value) > MAX_ADDRESS_PAIRS:
        raise AllowedAddressPairExhausted(quota=MAX_ADDRESS_PAIRS)
    seen: set[tuple[str | None, str]] = set()
    pairs = []
    for pair in value:
        if not isinstance(pair, dict):
            raise InvalidAttribute(attr="allowed_address_pairs", reason=f"'{pair}' is not a dictionary")
        mac = pair.get("mac_address")
        if "mac_address" in pair:
            mac = validation.mac_address(mac, "allowed_address_pairs") if _is_mac(mac) else _bad_mac(mac)
        if "ip_address" not in pair:
            raise AllowedAddressPairsMissingIP()
        ip_address = pair["ip_address"]
        if (mac, str(ip_address)) in seen:
            raise DuplicateAddressPairInRequest(mac_address=mac, ip_address=ip_address)
        seen.add((mac, str(ip_address)))
        unknown = set(pair) - {"mac_address", "ip_address"}
        if unknown:
            raise AttributeRefused(reason=f"Unrecognized attribute(s) '{', '.join(sorted(unknown))}'")
        _check_pair_address(ip_address)
        pairs.append({"ip_address": ip_address, **({"mac_address": mac} if mac is not None else {})})
    return pairs


def _is_mac(value: object) -> bool:
    try:
        validation.mac_address(value)
    except InvalidAttribute:
        return False
    return True


def _bad_mac(value: object) -> str:
    raise AttributeRefused(reason=f"'{value}' is not a valid MAC address")


def _check_pair_address(ip_address: object) -> None:
    if not isinstance(ip_address, str):
        raise AttributeRefused(reason=f"'{ip_address}' is not a valid IP address")
    try:
        if "/" in ip_address:
            network = netaddr.IPNetwork(ip_address)
            if network.is_multicast():
                raise AttributeRefused(reason=f"'{ip_address}' is a multicast subnet")
        else:
            address = netaddr.IPAddress(ip_address)
            if address.is_multicast():
                raise AttributeRefused(reason=f"'{ip_address}' is a multicast IP address")
    except (netaddr.AddrFormatError, ValueError, TypeError):
        kind = "IP subnet" if "/" in ip_address else "IP address"
        raise AttributeRefused(reason=f"'{ip_address}' is not a valid {kind}") from None


def with_port_mac(pairs: list[dict[str, str]], mac: str) -> list[dict[str, str]]:
    """neutron stores every pair with a MAC: the port's own where none was given."""
    return [{"ip_address": pair["ip_address"], "mac_address": pair.get("mac_address") or mac} for pair in pairs]


# -- extra DHCP options ---------------------------------------------------------------------------


def dhcp_opts(value: object) -> list[dict[str, Any]] | None:
    """neutron-lib's ``type:list_of_any_key_specs_or_none`` with the extra_dhcp_opt key specs; each option
    comes back with its ip_version (4 unless given). A null ``opt_value`` is kept: on update it deletes."""
    if value is None:
        return None
    if not isinstance(value, list):
        raise InvalidInput(error_message=f"'{value}' is not a list")
    duplicates = [item for index, item in enumerate(value) if item in value[:index]]
    if duplicates:
        raise InvalidInput(error_message=f"Duplicate items in the list: '{', '.join(str(d) for d in duplicates)}'")
    return [_dhcp_opt(item) for item in value]


def _dhcp_opt(item: object) -> dict[str, Any]:
    if isinstance(item, dict) and set(item) <= {"opt_name", "opt_value", "ip_version"} and \
            {"opt_name", "opt_value"} <= set(item):
        version = _ip_version(item.get("ip_version", 4))
        name, value = item["opt_name"], item["opt_value"]
        if version is not None and _opt_matches(name, value):
            return {"opt_name": name, "opt_value": value, "ip_version": version}
    raise InvalidInput(error_message=f"No valid key specs matched for: {item}")


def _ip_version(value: object) -> int | None:
    try:
        version = int(value) if not isinstance(value, bool) else None  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return None
    return version if version in (4, 6) else None


def _opt_matches(name: object, value: object) -> bool:
    if name in BLANK_ALLOWED_OPTS:
        return value is None or (isinstance(value, str) and len(value) <= OPT_VALUE_MAX)
    return _one_line(name, OPT_NAME_MAX) and (value is None or _one_line(value, OPT_VALUE_MAX))


def _one_line(value: object, max_len: int) -> bool:
    return isinstance(value, str) and len(value) <= max_len and bool(value.strip()) and len(value.splitlines()) <= 1


def _kept(opt: dict[str, Any]) -> bool:
    """neutron's ``_is_valid_opt_value``: a blank value is kept only for the options that allow one."""
    if opt["opt_name"] in BLANK_ALLOWED_OPTS:
        return opt["opt_value"] is not None
    return bool(opt["opt_value"])


def initial_dhcp_opts(opts: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    return [opt for opt in opts or [] if _kept(opt)]


def merged_dhcp_opts(current: list[dict[str, Any]], updates: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """neutron's ``_update_extra_dhcp_opts_on_port``: an option named again (same ip_version) is replaced,
    or removed with a null value; a new one is added; the others stay."""
    merged = [dict(opt) for opt in current]
    for update in updates:
        for index, opt in enumerate(merged):
            if opt["opt_name"] == update["opt_name"] and opt["ip_version"] == update["ip_version"]:
                if update["opt_value"] is None:
                    del merged[index]
                elif _kept(update):
                    merged[index] = dict(update)
                break
        else:
            if _kept(update):
                merged.append(dict(update))
    return merged
