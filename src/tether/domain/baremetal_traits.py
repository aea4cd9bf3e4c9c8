"""Node traits, with ironic's limits: a standard os-traits name or CUSTOM_[A-Z0-9_]+, at most 255
characters, at most 50 per node (pure: no I/O)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache

from tether.domain.errors import baremetal as be

MAX_TRAITS_PER_NODE = 50
MAX_TRAIT_LENGTH = 255
CUSTOM_TRAIT = re.compile(r"^CUSTOM_[A-Z0-9_]+$")


@cache
def standard_traits() -> frozenset[str]:
    import os_traits  # loaded by the first trait checked, not by every start of the server

    return frozenset(os_traits.get_traits())


def is_valid_trait(trait: object) -> bool:
    return (isinstance(trait, str) and 0 < len(trait) <= MAX_TRAIT_LENGTH
            and (bool(CUSTOM_TRAIT.match(trait)) or trait in standard_traits()))


def check_count(node_uuid: str, traits: Iterable[str]) -> list[str]:
    """The traits, duplicates dropped and sorted; more than ironic's per-node limit is refused."""
    unique = sorted(set(traits))
    if len(unique) > MAX_TRAITS_PER_NODE:
        raise be.InvalidParameterValue(
            err=f"Could not modify traits for node {node_uuid} as it would exceed the maximum number of "
                f"traits per node ({len(unique)} vs. {MAX_TRAITS_PER_NODE})")
    return unique
