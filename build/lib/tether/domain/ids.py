"""Identifiers and MAC addresses.

Randomness comes in as a ``random.Random`` so scenarios and the explorer can
seed it and get the same ids and MACs every run.
"""

from __future__ import annotations

import random
import uuid

NEUTRON_MAC_PREFIX = (0xFA, 0x16, 0x3E)


def new_uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def new_mac(rng: random.Random) -> str:
    """A neutron-style MAC: ``fa:16:3e:xx:xx:xx``."""
    tail = [rng.randrange(256) for _ in range(3)]
    return ":".join(f"{octet:02x}" for octet in (*NEUTRON_MAC_PREFIX, *tail))


def is_uuid_like(value: object) -> bool:
    if not isinstance(value, str):
        return False
    try:
        return str(uuid.UUID(value)) == value.lower()
    except ValueError:
        return False


def normalize_mac(value: str) -> str | None:
    """``aa:bb:cc:dd:ee:ff`` in lower case, or None when ``value`` is not a MAC."""
    import netaddr

    try:
        return str(netaddr.EUI(value, dialect=netaddr.mac_unix_expanded)).lower()
    except (netaddr.AddrFormatError, TypeError, ValueError):
        return None
