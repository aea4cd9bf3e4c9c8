"""GET /servers[/detail] query parameters: nova's filters, its policy on them, its sort order and paging.

Non-admins' filters outside nova's allowed list are dropped silently (nova's
remove_invalid_options); from 2.75 an unknown parameter is a 400. Filters on
things Tether does not have match as nova's database would: a tag filter
finds no tagged server, a "not tagged" filter finds all of them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from fastapi import Request

from tether.api import paging
from tether.api.compute import views
from tether.api.compute.bodies import fail
from tether.api.compute.query import MAX_LIMIT, lenient_bool, limit_and_marker, strict_bool, timestamp
from tether.api.versions import Microversion
from tether.domain.compute import Instance
from tether.domain.errors import compute as ce
from tether.domain.listing import Contains
from tether.services.compute.queries import ServerRecord
from tether.services.context import RequestContext

# nova's _STATE_MAP, status -> vm_state (Tether has the states in the first row).
STATUSES = {
    "ACTIVE": "active", "BUILD": "building", "ERROR": "error", "DELETED": "deleted", "SHUTOFF": "stopped",
    "REBOOT": None, "HARD_REBOOT": None, "PASSWORD": None, "REBUILD": None, "MIGRATING": None, "RESIZE": None,
    "VERIFY_RESIZE": None, "REVERT_RESIZE": None, "PAUSED": None, "SUSPENDED": None, "RESCUE": None,
    "SOFT_DELETED": None, "SHELVED": None, "SHELVED_OFFLOADED": None,
}
PAGING = ("limit", "marker", "sort_key", "sort_dir")
JOINED = ("block_device_mapping", "services", "metadata", "system_metadata", "info_cache", "security_groups",
          "pci_devices")
TAG_FILTERS = ("tags", "tags-any", "not-tags", "not-tags-any")
KNOWN = (
    "user_id", "project_id", "tenant_id", "launch_index", "image_ref", "image", "kernel_id", "ramdisk_id",
    "hostname", "key_name", "power_state", "vm_state", "task_state", "host", "node", "flavor", "reservation_id",
    "launched_at", "terminated_at", "availability_zone", "name", "display_name", "description",
    "display_description", "locked_by", "uuid", "root_device_name", "config_drive", "access_ip_v4",
    "access_ip_v6", "auto_disk_config", "progress", "all_tenants", "all_projects", "soft_deleted", "deleted",
    "status",
    "changes-since", "ip", "ip6", "created_at", *PAGING, *JOINED,
)
# Values Tether never has: a regex or equality filter on them matches nothing.
NEVER_SET = ("kernel_id", "ramdisk_id", "root_device_name", "reservation_id")
SORT_KEYS: dict[str, Callable[[Instance], Any]] = {
    "created_at": lambda i: i.created_at, "updated_at": lambda i: i.updated_at,
    "launched_at": lambda i: i.launched_at, "terminated_at": lambda i: i.deleted_at,
    "display_name": lambda i: i.name, "uuid": lambda i: i.uuid, "host": lambda i: i.host,
    "node": lambda i: i.node, "project_id": lambda i: i.project_id, "user_id": lambda i: i.user_id,
    "vm_state": lambda i: i.vm_state, "task_state": lambda i: i.task_state,
    "power_state": lambda i: i.power_state, "key_name": lambda i: i.key_name,
    "image_ref": lambda i: i.image_id, "instance_type_id": lambda i: i.flavor_id,
    "hostname": views.guest_hostname, "availability_zone": lambda i: "nova" if i.host else None,
}
# The sort keys an instance stores, by its column: a list sorted by them pages in the database.
SORT_COLUMNS = {
    "created_at": "created_at", "updated_at": "updated_at", "launched_at": "launched_at",
    "terminated_at": "deleted_at", "display_name": "name", "uuid": "uuid", "host": "host", "node": "node",
    "project_id": "project_id", "user_id": "user_id", "vm_state": "vm_state", "task_state": "task_state",
    "power_state": "power_state", "key_name": "key_name", "image_ref": "image_id", "instance_type_id": "flavor_id",
}
# A regular expression without these is a plain substring, which the database can look for first.
_REGEX_SYNTAX = frozenset(".^$*+?{}[]\\|()")
# Valid in nova and the same for every Tether server, so sorting by them keeps the default order.
CONSTANT_SORT_KEYS = ("access_ip_v4", "access_ip_v6", "auto_disk_config", "config_drive", "display_description",
                      "kernel_id", "launch_index", "locked_by", "progress", "ramdisk_id", "root_device_name",
                      "locked")
IGNORED_SORT_KEYS = ("architecture", "cell_name", "cleaned", "default_ephemeral_device", "default_swap_device",
                     "deleted", "deleted_at", "disable_terminate", "ephemeral_gb", "ephemeral_key_uuid", "id",
                     "key_data", "launched_on", "memory_mb", "os_type", "reservation_id", "root_gb",
                     "shutdown_terminate", "user_data", "vcpus", "vm_mode")


def _non_admin_filters(version: Microversion) -> set[str]:
    allowed = {"reservation_id", "name", "status", "image", "flavor", "ip", "changes-since", "all_tenants",
               "all_projects"}
    if version.at_least("2.5"):
        allowed.add("ip6")
    if version.at_least("2.26"):
        allowed.update(TAG_FILTERS)
    if version.at_least("2.66"):
        allowed.add("changes-before")
    if version.at_least("2.73"):
        allowed.add("locked")
    if version.at_least("2.83"):
        allowed.update({"availability_zone", "config_drive", "key_name", "created_at", "launched_at",
                        "terminated_at", "power_state", "task_state", "vm_state", "progress", "user_id"})
    return allowed | set(PAGING)


def _known(version: Microversion) -> set[str]:
    known = set(KNOWN)
    if version.at_least("2.26"):
        known.update(TAG_FILTERS)
    if version.at_least("2.66"):
        known.add("changes-before")
    if version.at_least("2.73"):
        known.add("locked")
    return known


@dataclass
class ServerQuery:
    """What a list request asks for, in terms the compute queries and the API can apply."""

    all_projects: bool = False
    columns: dict[str, Any] = field(default_factory=dict)
    checks: list[Callable[[Instance], bool]] = field(default_factory=list)
    address_checks: list[Callable[[ServerRecord], bool]] = field(default_factory=list)
    matches_nothing: bool = False
    # Narrowing the database does before ``checks`` (a name's text, whatever its case): never the last word
    prefilters: dict[str, Any] = field(default_factory=dict)
    sort: list[paging.SortKey] = field(default_factory=list)
    limit: int = MAX_LIMIT
    marker: str | None = None

    def keep(self, instance: Instance) -> bool:
        return all(check(instance) for check in self.checks)

    def keep_record(self, record: ServerRecord) -> bool:
        return all(check(record) for check in self.address_checks)

    def paging(self) -> paging.ListQuery:
        # Tie-breakers last, as nova's database sorts: created_at, then id (here uuid), newest first.
        order = (*self.sort, paging.SortKey("created_at", False), paging.SortKey("uuid", False))
        return paging.ListQuery(sort=order, marker=self.marker, limit=self.limit)

    def stored(self) -> paging.ListQuery | None:
        """The list as the store runs it (``Repository.page``), or None when it sorts by what an instance
        does not store, or filters by addresses (its ports'): those are paged in memory (``ordered_page``)."""
        if self.address_checks or any(key.name not in SORT_COLUMNS for key in self.sort):
            return None
        listed = self.paging()
        order = tuple(paging.SortKey(SORT_COLUMNS[key.name], key.ascending) for key in listed.sort)
        filters = {**{name: [value] for name, value in self.columns.items()}, **self.prefilters}
        return listed._replace(filters=filters, sort=order)


def parse_server_query(request: Request, ctx: RequestContext, version: Microversion) -> ServerQuery:
    params = {name: request.query_params.getlist(name) for name in request.query_params}
    known = _known(version)
    unknown = sorted(name for name in params if name not in known)
    for name in params:
        if name in JOINED or name.startswith("_"):
            raise fail(f"Invalid filter field: {name}.")
    if unknown and version.at_least("2.75"):
        raise fail(f"Invalid input for query parameters. Additional properties are not allowed "
                   f"({', '.join(repr(name) for name in unknown)} was unexpected)")
    if not ctx.is_admin:
        allowed = _non_admin_filters(version)
        params = {name: values for name, values in params.items() if name in allowed}
    else:
        params = {name: values for name, values in params.items() if name in known}
    query = ServerQuery()
    one = {name: values[-1] for name, values in params.items()}
    _status(query, params.get("status"), ctx, version, one)
    _scope(query, one, ctx)
    _filters(query, one, version)
    _sorting(query, params, ctx)
    query.limit, query.marker = limit_and_marker(request)
    return query


def _status(query: ServerQuery, statuses: list[str] | None, ctx: RequestContext, version: Microversion,
            one: dict[str, str]) -> None:
    if statuses is None:
        return
    wanted = {status.upper() for status in statuses}
    known = wanted & set(STATUSES)
    if not known:
        if version.at_least("2.38"):
            raise fail("Invalid status value")
        query.matches_nothing = True
        return
    if wanted == {"DELETED"}:
        if not ctx.is_admin:
            raise ce.ComputeForbidden(message="Only administrators may list deleted instances")
        one.setdefault("deleted", "true")
    vm_states = {STATUSES[status] for status in known} - {None}
    if not vm_states:
        query.matches_nothing = True
        return
    query.checks.append(lambda i: (i.vm_state if not i.deleted else "deleted") in vm_states)


def _scope(query: ServerQuery, one: dict[str, str], ctx: RequestContext) -> None:
    # nova's is_all_tenants: present and empty means yes. all_projects is the SDK's and OSC's word for
    # it; nova itself would refuse it from 2.75, Tether takes it as the same thing.
    name = "all_tenants" if "all_tenants" in one else "all_projects"
    raw = one.get(name)
    if raw is not None and (raw == "" or strict_bool(name, raw)):
        if not ctx.is_admin:
            raise ce.ComputeForbidden(action="os_compute_api:servers:detail:get_all_tenants")
        query.all_projects = True
    project = one.get("project_id") or one.get("tenant_id")
    if project and ctx.is_admin and query.all_projects:
        # as nova: a project named without all_tenants is ignored (LP #1185290), the caller's own is listed
        query.columns["project_id"] = project
    if "deleted" in one:
        query.columns["deleted"] = lenient_bool(one["deleted"])
    elif "changes-since" not in one and "changes-before" not in one:
        query.columns["deleted"] = False


def _filters(query: ServerQuery, one: dict[str, str], version: Microversion) -> None:
    for name in ("user_id", "host", "uuid", "vm_state", "task_state"):
        if name in one:
            query.columns[name] = one[name]
    if "node" in one:
        query.checks.append(_regex("node", one["node"], lambda i: i.node))
    image = one.get("image", one.get("image_ref"))
    if image is not None:
        query.columns["image_id"] = image.rstrip("/").rsplit("/", 1)[-1]
    if "flavor" in one:
        query.columns["flavor_id"] = one["flavor"]
    name = one.get("name", one.get("display_name"))
    if name is not None:
        query.checks.append(_regex("name", name, lambda i: i.name))
        literal = _literal_of(name)
        if literal:
            query.prefilters["name"] = Contains(literal)
    for key, get in (("key_name", lambda i: i.key_name), ("hostname", views.guest_hostname),
                     ("availability_zone", lambda i: "nova" if i.host else "")):
        if key in one:
            query.checks.append(_regex(key, one[key], get))
    if "power_state" in one:
        query.checks.append(_regex("power_state", one["power_state"], lambda i: str(i.power_state)))
    if "launch_index" in one and one["launch_index"] != "0":
        query.matches_nothing = True
    for bound, after in (("changes-since", True), ("changes-before", False)):
        if bound in one:
            moment = timestamp(bound, one[bound])
            query.checks.append((lambda i, m=moment: i.updated_at >= m) if after
                                else (lambda i, m=moment: i.updated_at <= m))
    for key, version_tag in (("ip", 4), ("ip6", 6)):
        if key in one:
            pattern = _compile(key, one[key])
            query.address_checks.append(lambda r, p=pattern, v=version_tag: any(
                p.search(address["addr"]) for ips in views.addresses(r).values() for address in ips
                if address["version"] == v))
    if any(one.get(name) for name in NEVER_SET):
        query.matches_nothing = True
    for key, get in (("locked_by", lambda i: i.locked_by), ("access_ip_v4", lambda i: i.access_ip_v4),
                     ("access_ip_v6", lambda i: i.access_ip_v6), ("description", lambda i: i.description),
                     ("display_description", lambda i: i.description)):
        if key in one:
            query.checks.append(_regex(key, one[key], lambda i, get=get: get(i) or ""))
    _tag_filters(query, one)
    if "locked" in one:
        wanted = strict_bool("locked", one["locked"])
        query.checks.append(lambda i: i.locked == wanted)
    if "soft_deleted" in one and lenient_bool(one["soft_deleted"]):
        query.matches_nothing = True
    for name in ("config_drive", "progress", "created_at", "launched_at", "terminated_at", "auto_disk_config"):
        if name in one:
            raise fail(f"Tether does not support filtering servers by {name}.")


def _tag_filters(query: ServerQuery, one: dict[str, str]) -> None:
    """nova's tag filters: each a comma-separated list (tags: all of them; tags-any: any; not-*: negated)."""
    for name in TAG_FILTERS:
        if name not in one:
            continue
        wanted = {tag.strip() for tag in one[name].split(",") if tag.strip()}
        test = {"tags": wanted.issubset, "tags-any": lambda tags, w=wanted: bool(w & tags),
                "not-tags": lambda tags, w=wanted: not w.issubset(tags),
                "not-tags-any": lambda tags, w=wanted: not (w & tags)}[name]
        query.checks.append(lambda i, test=test: test(set(i.tags or ())))


def _sorting(query: ServerQuery, params: dict[str, list[str]], ctx: RequestContext) -> None:
    keys = [key.strip() for key in params.get("sort_key", [])]
    dirs = [value.strip() for value in params.get("sort_dir", [])]
    for value in dirs:
        if value not in ("asc", "desc"):
            raise fail(f"Invalid input for query parameters sort_dir. Value: {value}. "
                       f"'{value}' is not one of ['asc', 'desc']")
    default_dir = dirs[0] if dirs else "desc"
    for index, key in enumerate(keys):
        if key in IGNORED_SORT_KEYS:
            continue
        if key in ("host", "node") and not ctx.is_admin:
            raise ce.ComputeForbidden(message=f"Only administrators can sort servers by {key}")
        descending = (dirs[index] if index < len(dirs) else default_dir) == "desc"
        if key in SORT_KEYS:
            query.sort.append(paging.SortKey(key, not descending))
        elif key not in CONSTANT_SORT_KEYS:
            raise fail(f"Invalid input for query parameters sort_key. Value: {key}. "
                       f"'{key}' is not a valid sort key")


def _literal_of(pattern: str) -> str | None:
    """The text every match of ``pattern`` holds, when it is plain text, perhaps anchored (``^web``,
    ``web-1$``): the database looks for it through an index before the expression decides. (An escaped
    ``\\$`` leaves a backslash, which is syntax: no literal.)"""
    text = pattern.removeprefix("^").removesuffix("$")
    return text if text and not _REGEX_SYNTAX.intersection(text) else None


def _compile(name: str, pattern: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error:
        raise fail(f"Invalid input for query parameters {name}. Value: {pattern}. Not a valid regular expression") \
            from None


def _regex(name: str, pattern: str, get: Callable[[Instance], Any]) -> Callable[[Instance], bool]:
    compiled = _compile(name, pattern)
    return lambda instance: (value := get(instance)) is not None and compiled.search(str(value)) is not None


def ordered_page(query: ServerQuery, instances: list[Instance], marker: Instance | None) -> list[Instance]:
    """The page after the marker (which may itself be filtered out, as nova's database allows)."""
    if query.marker is not None and marker is None:
        raise fail(f"marker [{query.marker}] not found")
    return paging.page(instances, query.paging(), lambda instance, key: SORT_KEYS[key](instance), marker=marker)
