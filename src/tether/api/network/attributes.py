"""Neutron's attribute maps for networks, subnets and ports, and how a request body is read against them.

Each attribute says what neutron-lib's ``RESOURCE_ATTRIBUTE_MAP`` says of it
(may it be given on POST or PUT, is it required, how its value is converted)
plus what neutron's default policy says (only admins see it, only admins set
it), and which field of the service holds it. Attributes Tether reports but
does not implement (``security_groups``, ``port_security_enabled``, ...)
carry the one value Tether always has: a request may repeat that value, and
anything else is refused rather than silently ignored.

``read_create`` and ``read_update`` follow neutron's ``prepare_request_body``
step by step, so the same bad body fails with the same words: project
fields, unrecognized attributes, POST/PUT permissions, required attributes,
conversion, then policy.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Final

from tether.api.network.errors import HTTPBadRequest, PolicyNotAuthorized, policy_rule
from tether.booleans import bool_from_string
from tether.domain.errors.network import BadRequest, InvalidInput
from tether.domain.ids import normalize_mac
from tether.domain.network import VNIC_TYPES
from tether.services.context import RequestContext
from tether.services.network import validation


class _Unset:
    def __repr__(self) -> str:
        return "UNSET"


UNSET: Final = _Unset()

Convert = Callable[[str, Any], Any]

def to_boolean(attr: str, value: Any) -> bool:
    """neutron-lib's convert_to_boolean: oslo's strict bool_from_string."""
    try:
        return bool(bool_from_string(value, strict=True))
    except ValueError:
        raise InvalidInput(error_message=f"'{value}' cannot be converted to boolean") from None


def to_int(attr: str, value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        raise InvalidInput(error_message=f"'{value}' is not an integer") from None


def to_string(attr: str, value: Any) -> str:
    return validation.string(attr, value)


def to_string_or_none(attr: str, value: Any) -> str | None:
    return None if value is None else validation.string(attr, value)


def to_uuid(attr: str, value: Any) -> str:
    return validation.uuid(attr, value)


def to_list(attr: str, value: Any) -> list[Any]:
    return validation.list_of(attr, value)


def to_list_or_empty(attr: str, value: Any) -> list[Any]:
    return [] if value is None else validation.list_of(attr, value)


def to_dict_or_empty(attr: str, value: Any) -> dict[str, Any]:
    return {} if value is None else validation.dictionary(attr, value)


def to_mac_or_none(attr: str, value: Any) -> str | None:
    """None asks for a fresh MAC (the port-mac-address-regenerate extension)."""
    return None if value is None else validation.mac_address(value, attr)


def to_vnic_type(attr: str, value: Any) -> str:
    return validation.one_of(attr, value, VNIC_TYPES)  # type: ignore[no-any-return]


def to_ip_version(attr: str, value: Any) -> int:
    return validation.one_of(attr, to_int(attr, value), (4, 6))  # type: ignore[no-any-return]


def passthrough(attr: str, value: Any) -> Any:
    """Checked by the service, which knows neutron-lib's validator for it."""
    return value


def no_subnet_pools(attr: str, value: Any) -> Any:
    raise InvalidInput(error_message=f"Tether has no subnet pools, so {attr} cannot be used: give a cidr")


def mac_filter(attr: str, value: Any) -> str:
    """Filters compare MACs as stored (lower case, colons); anything else simply matches nothing."""
    return normalize_mac(value) or value


_TYPED = (to_boolean, to_int, to_ip_version)


@dataclass(frozen=True)
class Attr:
    name: str
    field: str | None = None
    """The service's name for it; None when the API reports it (constants, derived values)."""
    post: bool = False
    put: bool = False
    required: bool = False
    convert: Convert | None = None
    admin_only: bool = False
    """Neutron's default policy shows it to admins only, and lets only admins set it."""
    admin_sets: bool = False
    """Everyone sees it; only admins set it."""
    fixed: Any = UNSET
    """The one value Tether has for an attribute it does not implement."""
    default: Any = UNSET
    """Neutron's default: on create, policy only looks at attributes set to something else."""
    visible: bool = True
    filter: bool = True
    filter_convert: Convert | None = None
    sort: bool = True

    def converted(self, value: Any) -> Any:
        return self.convert(self.name, value) if self.convert is not None else value

    def filter_value(self, value: str) -> Any:
        """A query-string value as the attribute's type: filters on typed attributes are converted."""
        if self.filter_convert is not None:
            return self.filter_convert(self.name, value)
        if self.convert in _TYPED:
            return self.convert(self.name, value)  # type: ignore[misc]
        return value


def _project_attrs() -> tuple[Attr, ...]:
    return (
        Attr("tenant_id", "project_id", post=True, convert=to_string),
        Attr("project_id", "project_id", post=True, convert=to_string),
    )


def _standard_attrs() -> tuple[Attr, ...]:
    return (
        Attr("description", "description", post=True, put=True, convert=to_string),
        # set through /{resource}/{id}/tags; filtered by tags, tags-any, not-tags, not-tags-any
        Attr("tags", filter=False, sort=False),
        Attr("created_at", filter=False),
        Attr("updated_at", filter=False),
    )


@dataclass(frozen=True)
class Resource:
    singular: str
    plural: str
    attributes: tuple[Attr, ...]

    @cached_property
    def by_name(self) -> Mapping[str, Attr]:
        return {attr.name: attr for attr in self.attributes}

    @cached_property
    def admin_only(self) -> frozenset[str]:
        return frozenset(attr.name for attr in self.attributes if attr.admin_only)


NETWORK = Resource("network", "networks", (
    Attr("id", "id"),
    Attr("name", "name", post=True, put=True, convert=to_string),
    *_project_attrs(),
    Attr("admin_state_up", "admin_state_up", post=True, put=True, convert=to_boolean),
    Attr("status", "status"),
    Attr("subnets", filter=False, sort=False),
    Attr("shared", "shared", post=True, put=True, convert=to_boolean, admin_sets=True, default=False),
    Attr("router:external", "external", post=True, put=True, convert=to_boolean, admin_sets=True, default=False),
    Attr("mtu", "mtu", post=True, put=True, convert=to_int),
    Attr("provider:network_type", "provider_network_type", post=True, put=True, convert=to_string,
         admin_only=True),
    Attr("provider:physical_network", "provider_physical_network", post=True, put=True, convert=to_string,
         admin_only=True),
    Attr("provider:segmentation_id", "provider_segmentation_id", post=True, put=True, convert=to_int,
         admin_only=True),
    Attr("port_security_enabled", "port_security_enabled", post=True, put=True, convert=to_boolean),
    *_standard_attrs(),
))

SUBNET = Resource("subnet", "subnets", (
    Attr("id", "id"),
    Attr("name", "name", post=True, put=True, convert=to_string),
    *_project_attrs(),
    Attr("network_id", "network_id", post=True, required=True, convert=to_uuid),
    Attr("ip_version", "ip_version", post=True, required=True, convert=to_ip_version),
    Attr("cidr", "cidr", post=True, convert=to_string),
    Attr("gateway_ip", "gateway_ip", post=True, put=True, convert=to_string_or_none),
    Attr("allocation_pools", "allocation_pools", post=True, put=True, convert=to_list, filter=False, sort=False),
    Attr("dns_nameservers", "dns_nameservers", post=True, put=True, convert=to_list_or_empty, filter=False,
         sort=False),
    Attr("host_routes", "host_routes", post=True, put=True, convert=passthrough, filter=False, sort=False),
    Attr("enable_dhcp", "enable_dhcp", post=True, put=True, convert=to_boolean),
    Attr("ipv6_ra_mode", "ipv6_ra_mode", post=True, convert=to_string_or_none),
    Attr("ipv6_address_mode", "ipv6_address_mode", post=True, convert=to_string_or_none),
    Attr("subnetpool_id", post=True, fixed=None),
    Attr("use_default_subnetpool", post=True, convert=to_boolean, fixed=False, visible=False, filter=False),
    Attr("prefixlen", post=True, convert=no_subnet_pools, visible=False, filter=False),
    *_standard_attrs(),
))

PORT = Resource("port", "ports", (
    Attr("id", "id"),
    Attr("name", "name", post=True, put=True, convert=to_string),
    Attr("network_id", "network_id", post=True, required=True, convert=to_uuid),
    *_project_attrs(),
    Attr("mac_address", "mac_address", post=True, put=True, convert=to_mac_or_none, filter_convert=mac_filter),
    Attr("admin_state_up", "admin_state_up", post=True, put=True, convert=to_boolean),
    Attr("status", "status"),
    Attr("device_id", "device_id", post=True, put=True, convert=to_string),
    Attr("device_owner", "device_owner", post=True, put=True, convert=to_string),
    Attr("fixed_ips", "fixed_ips", post=True, put=True, convert=to_list, sort=False),
    Attr("binding:host_id", "binding_host_id", post=True, put=True, convert=to_string, admin_only=True),
    Attr("binding:vnic_type", "binding_vnic_type", post=True, put=True, convert=to_vnic_type),
    Attr("binding:profile", "binding_profile", post=True, put=True, convert=to_dict_or_empty, admin_only=True,
         filter=False, sort=False),
    Attr("binding:vif_type", "binding_vif_type", admin_only=True),
    Attr("binding:vif_details", admin_only=True, filter=False, sort=False),
    # the service checks these in neutron-lib's words (see services/network/port_extras.py)
    Attr("security_groups", "security_groups", post=True, put=True, convert=passthrough, sort=False),
    Attr("allowed_address_pairs", "allowed_address_pairs", post=True, put=True, convert=passthrough, filter=False,
         sort=False),
    Attr("extra_dhcp_opts", "extra_dhcp_opts", post=True, put=True, convert=passthrough, filter=False, sort=False),
    Attr("port_security_enabled", "port_security_enabled", post=True, put=True, convert=to_boolean),
    *_standard_attrs(),
))


# -- reading request bodies ---------------------------------------------------------


def body_items(resource: Resource, body: Any, bulk_allowed: bool = True) -> tuple[list[Any], bool]:
    """The resource objects in a POST/PUT body, and whether it was a bulk request."""
    if not body:
        raise HTTPBadRequest("Resource body required")
    if isinstance(body, dict) and resource.plural in body:
        if not bulk_allowed:
            raise HTTPBadRequest("Bulk operation not supported")
        items = body[resource.plural]
        if not items:
            raise HTTPBadRequest("Resources required")
        if not isinstance(items, list):
            raise HTTPBadRequest("Body contains invalid data")
        return [_unwrap(resource, item if isinstance(item, dict) and resource.singular in item
                        else {resource.singular: item}) for item in items], True
    return [_unwrap(resource, body)], False


def _unwrap(resource: Resource, body: Any) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise HTTPBadRequest("Body contains invalid data")
    inner = body.get(resource.singular)
    if inner is None:
        raise HTTPBadRequest(f"Unable to find '{resource.singular}' in request body")
    if not isinstance(inner, dict):
        raise HTTPBadRequest(f"Object '{resource.singular}' contains invalid data")
    return dict(inner)


def read_create(resource: Resource, item: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
    """A POSTed resource as the service's keyword arguments."""
    _project(item, ctx)
    _verify_known(resource, item)
    for name in item:
        if not resource.by_name[name].post:
            raise HTTPBadRequest(f"Attribute '{name}' not allowed in POST")
    for attr in resource.attributes:
        if attr.required and attr.name not in item:
            raise HTTPBadRequest(f"Failed to parse request. Required attribute '{attr.name}' not specified")
    values = _convert(resource, item)
    # neutron's _is_attribute_explicitly_set: on create, a value equal to the default is not "set"
    chosen = {name: value for name, value in values.items() if value != resource.by_name[name].default}
    _enforce_admin(resource, f"create_{resource.singular}", chosen, ctx)
    return _fields(resource, values)


def read_update(resource: Resource, item: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
    """A PUT body as ``{neutron name: converted value}`` (the caller maps it to the service's names)."""
    _project(item, ctx)
    _verify_known(resource, item)
    for name in item:
        if not resource.by_name[name].put:
            raise HTTPBadRequest(f"Cannot update read-only attribute {name}")
    values = _convert(resource, item)
    _enforce_admin(resource, f"update_{resource.singular}", values, ctx)
    return values


def fields_of(resource: Resource, values: Mapping[str, Any]) -> dict[str, Any]:
    return _fields(resource, dict(values))


def _project(item: dict[str, Any], ctx: RequestContext) -> None:
    """neutron-lib's ``populate_project_info`` and ``_validate_privileges``."""
    if "tenant_id" in item and "project_id" not in item:
        item["project_id"] = item["tenant_id"]
    elif "project_id" in item and "tenant_id" not in item:
        item["tenant_id"] = item["project_id"]
    if item.get("project_id") != item.get("tenant_id"):
        raise HTTPBadRequest("'project_id' and 'tenant_id' do not match")
    if "project_id" in item and item["project_id"] != ctx.project_id and not ctx.is_admin:
        raise HTTPBadRequest("Specifying 'project_id' other than the authenticated project in request is not "
                             "allowed for the current user.")


def _verify_known(resource: Resource, item: Mapping[str, Any]) -> None:
    unknown = sorted(name for name in item if name not in resource.by_name)
    if unknown:
        raise HTTPBadRequest(f"Unrecognized attribute(s) '{', '.join(unknown)}'")


def _convert(resource: Resource, item: Mapping[str, Any]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for name, value in item.items():
        attr = resource.by_name[name]
        converted = attr.converted(value)
        if attr.fixed is not UNSET and converted != attr.fixed:
            raise InvalidInput(error_message=f"Tether does not implement {name}: it is always "
                                             f"{json.dumps(attr.fixed)}")
        values[name] = converted
    return values


def _enforce_admin(resource: Resource, action: str, values: Mapping[str, Any], ctx: RequestContext) -> None:
    if ctx.is_admin:
        return
    # in the order of the attribute map, as neutron builds its match rule
    refused = [attr.name for attr in resource.attributes
               if attr.name in values and (attr.admin_only or attr.admin_sets)]
    if refused:
        raise PolicyNotAuthorized(rule=policy_rule(action, refused))


def _fields(resource: Resource, values: dict[str, Any]) -> dict[str, Any]:
    values.pop("tenant_id", None)
    fields: dict[str, Any] = {}
    for name, value in values.items():
        field = resource.by_name[name].field
        if field is not None:
            fields[field] = value
    return fields


def require_cidr(fields: Mapping[str, Any]) -> None:
    if "cidr" not in fields:
        raise BadRequest(resource="subnets", msg="a subnetpool must be specified in the absence of a cidr")
