"""Checks on what callers send, each failing with ironic's words before anything changes."""

from __future__ import annotations

import re
from typing import Any

from tether.domain.errors import baremetal as be
from tether.domain.ids import is_uuid_like, normalize_mac

# ironic >= API 1.10: a logical name is made of RFC 3986 unreserved characters.
_LOGICAL_NAME = re.compile(r"^[A-Za-z0-9\-._~]{1,255}$")


def is_logical_name(value: Any) -> bool:
    return isinstance(value, str) and bool(_LOGICAL_NAME.match(value)) and not is_uuid_like(value)


def node_name(value: Any, *, creating: bool) -> str | None:
    if value is None or is_logical_name(value):
        return value
    if creating:
        raise be.InvalidParameterValue(err=f"Cannot create node with invalid name '{value}'")
    raise be.InvalidName(name=value)


def logical_name(value: Any) -> str | None:
    if value is None or is_logical_name(value):
        return value
    raise be.InvalidName(name=value)


def uuid_value(value: Any) -> str:
    if not is_uuid_like(value):
        raise be.InvalidUUID(uuid=value)
    return str(value).lower()


def mac_address(value: Any) -> str:
    mac = normalize_mac(value) if isinstance(value, str) else None
    if mac is None:
        raise be.InvalidMAC(mac=value)
    return mac


def mapping(value: Any, field: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise be.InvalidParameterValue(err=f"Invalid input for field/attribute {field}. Value: '{value}'. "
                                           "Expected a dictionary")
    return value


def boolean(value: Any, field: str) -> bool:
    if not isinstance(value, bool):
        raise be.InvalidParameterValue(err=f"Invalid input for field/attribute {field}. Value: '{value}'. "
                                           "Wrong type. Expected 'bool'")
    return value


def optional_text(value: Any, field: str, max_length: int = 255) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value or len(value) > max_length:
        raise be.InvalidParameterValue(err=f"Invalid input for field/attribute {field}. Value: '{value}'. "
                                           f"Expected a string of 1 to {max_length} characters")
    return value
