"""Attribute checks in neutron-lib's words: bad input is refused before any transaction opens."""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import Any

from tether.domain.errors.network import InvalidAttribute, ReadOnlyAttribute, UnrecognizedAttribute
from tether.domain.ids import is_uuid_like, normalize_mac

NAME_MAX = 255
# neutron-lib's INVALID_MAC_ADDRESSES: the all-zero and broadcast MACs are never a port's.
INVALID_MACS = ("00:00:00:00:00:00", "ff:ff:ff:ff:ff:ff")


def string(attr: str, value: object, max_len: int = NAME_MAX) -> str:
    if not isinstance(value, str):
        raise InvalidAttribute(attr=attr, reason=f"'{value}' is not a valid string")
    if len(value) > max_len:
        raise InvalidAttribute(attr=attr, reason=f"'{value}' exceeds maximum length of {max_len}")
    return value


def optional_string(attr: str, value: object) -> str | None:
    return None if value is None else string(attr, value)


def boolean(attr: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise InvalidAttribute(attr=attr, reason=f"'{value}' cannot be converted to boolean")
    return value


def integer(attr: str, value: object, minimum: int | None = None, maximum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidAttribute(attr=attr, reason=f"'{value}' is not an integer")
    if minimum is not None and value < minimum:
        raise InvalidAttribute(attr=attr, reason=f"'{value}' is too small - must be at least '{minimum}'")
    if maximum is not None and value > maximum:
        raise InvalidAttribute(attr=attr, reason=f"'{value}' is too large - must be no larger than '{maximum}'")
    return value


def one_of(attr: str, value: object, choices: Collection[Any]) -> Any:
    if value not in choices:
        raise InvalidAttribute(attr=attr, reason=f"{value} is not in {list(choices)}")
    return value


def dictionary(attr: str, value: object) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise InvalidAttribute(attr=attr, reason=f"'{value}' is not a dictionary")
    return dict(value)


def uuid(attr: str, value: object) -> str:
    if not is_uuid_like(value):
        raise InvalidAttribute(attr=attr, reason=f"'{value}' is not a valid UUID")
    return value  # type: ignore[return-value]


def list_of(attr: str, value: object) -> list[Any]:
    if not isinstance(value, (list, tuple)):
        raise InvalidAttribute(attr=attr, reason=f"'{value}' is not a list")
    return list(value)


def mac_address(value: object, attr: str = "mac_address") -> str:
    mac = normalize_mac(value) if isinstance(value, str) and value.strip() == value else None
    if mac is None or mac in INVALID_MACS:
        raise InvalidAttribute(attr=attr, reason=f"'{value}' is not a valid MAC address")
    return mac


def known_keys(given: Iterable[str], allowed: Collection[str], read_only: Collection[str] = ()) -> None:
    given = list(given)
    for key in given:
        if key in read_only:
            raise ReadOnlyAttribute(attr=key)
    unknown = [key for key in given if key not in allowed]
    if unknown:
        raise UnrecognizedAttribute(attrs=", ".join(unknown))
