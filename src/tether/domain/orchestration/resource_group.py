"""OS::Heat::ResourceGroup's members, as heat names and defines them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from itertools import count as naturals
from itertools import islice
from typing import Any

from tether.domain.orchestration.definitions import ResourceDefinition


def member_definition(group_def: Mapping[str, Any], index: int, index_var: str = "%index%") -> ResourceDefinition:
    """Member ``index`` of a group whose ``resource_def`` is ``group_def``.

    As heat does, every string in the properties has ``index_var`` replaced by the
    member's name (keys, the type and the metadata are left alone).
    """
    name = str(index)
    return ResourceDefinition(name=name, type=group_def["type"],
                              properties=_substitute(group_def.get("properties") or {}, index_var, name),
                              metadata=dict(group_def.get("metadata") or {}))


def _substitute(value: Any, index_var: str, name: str) -> Any:
    if isinstance(value, str):
        return value.replace(index_var, name)
    if isinstance(value, Mapping):
        return {key: _substitute(item, index_var, name) for key, item in value.items()}
    if isinstance(value, list):
        return [_substitute(item, index_var, name) for item in value]
    return value


def skip_list(removal_policies: Iterable[Mapping[str, Any]] | None, existing: Sequence[str] = (), *,
              refs_map: Mapping[str, Any] | None = None, skiplist: Iterable[str] = ()) -> set[str]:
    """The member names a group never uses (again): heat's ``name_blacklist``.

    An entry of a ``resource_list`` is a member name (or index) or a member's
    physical id. Before the group exists (``existing`` empty) every entry is taken
    as a name; afterwards only names of existing members and ids found in
    ``refs_map`` (name -> physical id) count, as in heat. ``skiplist`` is what
    earlier updates blacklisted; the engine keeps it, since names are never reused.
    """
    skipped = set(skiplist)
    members = set(existing)
    for policy in removal_policies or ():
        for entry in policy.get("resource_list") or ():
            name = str(entry)
            if name in skipped or not members or name in members:
                skipped.add(name)
            elif refs_map:
                skipped.update(member for member, ref in refs_map.items() if ref == entry)
    return skipped


def member_names(count: int, removal_policies: Iterable[Mapping[str, Any]] | None, existing: Sequence[str] = (), *,
                 refs_map: Mapping[str, Any] | None = None, skiplist: Iterable[str] = ()) -> list[str]:
    """The ``count`` member names of a group: "0", "1", ... skipping blacklisted ones.

    Existing members whose names are among these keep them; new members take the
    lowest free names; an existing member not named here is the one to remove.
    """
    skipped = skip_list(removal_policies, existing, refs_map=refs_map, skiplist=skiplist)
    return list(islice((str(n) for n in naturals() if str(n) not in skipped), max(count, 0)))
