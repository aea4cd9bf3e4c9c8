"""The resource types Tether knows, their properties and attributes as data, after heat's schemas.

Every property heat defines for a type is known, so a template that uses one is
not refused as "Unknown Property"; only those Tether acts on are ``supported``.
The engine declines an unsupported property that a template sets (see
:func:`unsupported_properties`) rather than dropping it silently.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tether.domain.orchestration.definitions import ResourceDefinition
from tether.domain.orchestration.errors import Path, StackValidationFailed
from tether.domain.orchestration.functions import function_call
from tether.domain.orchestration.parameters import Constraint, CustomCheck

PROPERTY_TYPES = ("string", "integer", "number", "boolean", "list", "map")
LineOf = Callable[[Path], "int | None"]


@dataclass(frozen=True)
class PropertySchema:
    name: str
    type: str
    required: bool = False
    default: Any = None
    update_allowed: bool = False
    immutable: bool = False
    constraints: tuple[Constraint, ...] = ()
    # a list's item schema, or a map's fixed keys; None when items or keys are free
    schema: PropertySchema | Mapping[str, PropertySchema] | None = None
    supported: bool = True

    @property
    def custom_constraint(self) -> str | None:
        return next((c.value for c in self.constraints if c.kind == "custom_constraint"), None)


@dataclass(frozen=True)
class ResourceType:
    name: str
    properties: Mapping[str, PropertySchema]
    attributes: frozenset[str]
    # groups and nested stacks also answer "resource.<name>.<attr>" and their members' attributes
    any_attribute: bool = False
    nested_template: str | None = None

    def has_attribute(self, name: str) -> bool:
        return self.any_attribute or name in self.attributes


def _p(name: str, type_: str, *, required: bool = False, default: Any = None, update: bool = False,
       immutable: bool = False, custom: str | None = None, allowed: tuple[Any, ...] | None = None,
       minimum: int | None = None, schema: PropertySchema | Mapping[str, PropertySchema] | None = None,
       supported: bool = True) -> PropertySchema:
    constraints: list[Constraint] = []
    if custom:
        constraints.append(Constraint("custom_constraint", custom))
    if allowed is not None:
        constraints.append(Constraint("allowed_values", list(allowed)))
    if minimum is not None:
        constraints.append(Constraint("range", {"min": minimum}))
    return PropertySchema(name, type_, required, default, update, immutable, tuple(constraints), schema, supported)


def _keys(*schemas: PropertySchema) -> dict[str, PropertySchema]:
    return {schema.name: schema for schema in schemas}


def _type(name: str, properties: list[PropertySchema], attributes: set[str], **kwargs: Any) -> ResourceType:
    # every heat resource has "show", the resource as its service shows it
    return ResourceType(name, _keys(*properties), frozenset(attributes | {"show"}), **kwargs)


_SERVER_NETWORK = _p("network", "map", schema=_keys(
    _p("uuid", "string", custom="neutron.network"),  # deprecated alias of network
    _p("network", "string", custom="neutron.network"),
    _p("allocate_network", "string", allowed=("none", "auto"), update=True, supported=False),
    _p("fixed_ip", "string"),
    _p("port", "string", custom="neutron.port"),
    _p("port_extra_properties", "map", update=True, supported=False),
    _p("subnet", "string", custom="neutron.subnet"),
    _p("floating_ip", "string", supported=False),
    _p("tag", "string", supported=False),
))

SERVER = _type("OS::Nova::Server", [
    _p("name", "string", update=True),
    _p("image", "string", custom="glance.image", update=True),  # an update rebuilds
    _p("flavor", "string", required=True, custom="nova.flavor", update=True),  # an update resizes
    _p("flavor_update_policy", "string", default="RESIZE", allowed=("RESIZE", "REPLACE"), update=True),
    _p("image_update_policy", "string", default="REBUILD", allowed=("REBUILD", "REPLACE", "REBUILD_PRESERVE_EPHEMERAL"),
       update=True),
    _p("networks", "list", update=True, schema=_SERVER_NETWORK),
    _p("metadata", "map", default={}, update=True),
    _p("admin_pass", "string", update=True),
    _p("key_name", "string", custom="nova.keypair", supported=False),
    _p("admin_user", "string", supported=False),
    _p("availability_zone", "string", supported=False),
    _p("security_groups", "list", default=[], supported=False),
    _p("scheduler_hints", "map", supported=False),
    _p("user_data_format", "string", default="HEAT_CFNTOOLS", allowed=("HEAT_CFNTOOLS", "RAW", "SOFTWARE_CONFIG"),
       supported=False),
    _p("user_data", "string", default="", update=True, supported=False),
    _p("user_data_update_policy", "string", default="REPLACE", allowed=("REPLACE", "IGNORE", "REBUILD"), update=True,
       supported=False),
    _p("software_config_transport", "string", default="POLL_SERVER_CFN", update=True, supported=False,
       allowed=("POLL_SERVER_CFN", "POLL_SERVER_HEAT", "POLL_TEMP_URL", "ZAQAR_MESSAGE")),
    _p("reservation_id", "string", supported=False),
    _p("config_drive", "boolean", supported=False),
    _p("diskConfig", "string", allowed=("AUTO", "MANUAL"), supported=False),
    _p("personality", "map", default={}, supported=False),
    _p("block_device_mapping", "list", supported=False),
    _p("block_device_mapping_v2", "list", supported=False),
    _p("tags", "list", update=True, supported=False),
    _p("deployment_swift_data", "map", default={}, update=True, supported=False),
], {"name", "addresses", "networks", "first_address", "instance_name", "accessIPv4", "accessIPv6", "console_urls",
    "tags", "os_collect_config"})

PORT = _type("OS::Neutron::Port", [
    _p("network", "string", required=True, custom="neutron.network"),
    _p("network_id", "string", custom="neutron.network"),  # deprecated alias of network
    _p("name", "string", update=True),
    _p("fixed_ips", "list", update=True, schema=_p("fixed_ip", "map", schema=_keys(
        _p("subnet_id", "string", custom="neutron.subnet"),  # deprecated alias of subnet
        _p("subnet", "string", custom="neutron.subnet"),
        _p("ip_address", "string"),
    ))),
    _p("mac_address", "string"),
    _p("device_id", "string", default="", update=True),
    _p("device_owner", "string", default="", update=True),
    _p("binding:vnic_type", "string", default="normal", update=True,
       allowed=("normal", "direct", "macvtap", "direct-physical", "baremetal", "virtio-forwarder", "smart-nic")),
    _p("admin_state_up", "boolean", default=True, update=True),
    _p("value_specs", "map", default={}, update=True, supported=False),
    _p("security_groups", "list", update=True, supported=False),
    _p("allowed_address_pairs", "list", update=True, supported=False, schema=_p("pair", "map", schema=_keys(
        _p("mac_address", "string"), _p("ip_address", "string", required=True)))),
    _p("port_security_enabled", "boolean", update=True, supported=False),
    _p("replacement_policy", "string", default="AUTO", allowed=("REPLACE_ALWAYS", "AUTO"), update=True),
    _p("dns_name", "string", update=True, supported=False),
    _p("tags", "list", update=True, supported=False),
    _p("qos_policy", "string", update=True, supported=False),
    _p("propagate_uplink_status", "boolean", update=True, supported=False),
    _p("no_fixed_ips", "boolean", update=True, supported=False),
], {"admin_state_up", "device_id", "device_owner", "fixed_ips", "mac_address", "name", "network_id",
    "security_groups", "status", "tenant_id", "allowed_address_pairs", "subnets", "port_security_enabled",
    "qos_policy_id", "dns_assignment", "network", "propagate_uplink_status"})

NET = _type("OS::Neutron::Net", [
    _p("name", "string", update=True),
    _p("admin_state_up", "boolean", default=True, update=True),
    _p("shared", "boolean", default=False, update=True),
    _p("tenant_id", "string"),
    _p("value_specs", "map", default={}, update=True, supported=False),
    _p("port_security_enabled", "boolean", update=True, supported=False),
    _p("dns_domain", "string", update=True, supported=False),
    _p("dhcp_agent_ids", "list", update=True, supported=False),
    _p("qos_policy", "string", update=True, supported=False),
    _p("availability_zone_hints", "list", supported=False),
    _p("tags", "list", update=True, supported=False),
], {"status", "name", "subnets", "admin_state_up", "tenant_id", "port_security_enabled", "mtu", "qos_policy_id",
    "l2_adjacency", "segments"})

SUBNET = _type("OS::Neutron::Subnet", [
    _p("network", "string", required=True, custom="neutron.network"),
    _p("network_id", "string", custom="neutron.network"),  # deprecated alias of network
    _p("cidr", "string"),
    _p("ip_version", "integer", default=4, allowed=(4, 6)),
    _p("name", "string", update=True),
    _p("gateway_ip", "string", update=True),
    _p("enable_dhcp", "boolean", default=True, update=True),
    _p("allocation_pools", "list", update=True, schema=_p("pool", "map", schema=_keys(
        _p("start", "string", required=True), _p("end", "string", required=True)))),
    _p("dns_nameservers", "list", default=[], update=True),
    _p("host_routes", "list", update=True, schema=_p("route", "map", schema=_keys(
        _p("destination", "string", required=True), _p("nexthop", "string", required=True)))),
    _p("tenant_id", "string"),
    _p("value_specs", "map", default={}, update=True, supported=False),
    _p("subnetpool", "string", supported=False),
    _p("prefixlen", "integer", supported=False),
    _p("ipv6_ra_mode", "string", allowed=("dhcpv6-stateful", "dhcpv6-stateless", "slaac"), supported=False),
    _p("ipv6_address_mode", "string", allowed=("dhcpv6-stateful", "dhcpv6-stateless", "slaac"), supported=False),
    _p("segment", "string", update=True, supported=False),
    _p("tags", "list", update=True, supported=False),
], {"name", "network_id", "tenant_id", "allocation_pools", "gateway_ip", "host_routes", "ip_version", "cidr",
    "dns_nameservers", "enable_dhcp", "segment_id", "subnetpool_id"})

RESOURCE_GROUP = _type("OS::Heat::ResourceGroup", [
    _p("count", "integer", default=1, minimum=0, update=True),
    _p("index_var", "string", default="%index%"),
    _p("resource_def", "map", required=True, update=True, schema=_keys(
        _p("type", "string", required=True), _p("properties", "map"), _p("metadata", "map"))),
    _p("removal_policies", "list", default=[], update=True, schema=_p("policy", "map", schema=_keys(
        _p("resource_list", "list", default=[])))),
    _p("removal_policies_mode", "string", default="append", allowed=("append", "update"), update=True),
], {"refs", "refs_map", "attributes", "removed_rsrc_list"}, any_attribute=True)

RESOURCE_TYPES: Mapping[str, ResourceType] = {t.name: t for t in (SERVER, PORT, NET, SUBNET, RESOURCE_GROUP)}


@dataclass
class _Checker:
    line_of: LineOf | None
    checks: list[CustomCheck] = field(default_factory=list)

    def fail(self, message: str, path: Path, line_path: Path | None = None) -> StackValidationFailed:
        line = self.line_of(line_path if line_path is not None else path) if self.line_of else None
        return StackValidationFailed(message, path=path, line=line, error="Property error")

    def properties(self, schemas: Mapping[str, PropertySchema], values: Any, path: Path) -> None:
        if function_call(values) is not None:
            return  # resolved later; heat checks it again then
        if not isinstance(values, Mapping):
            raise self.fail(f'"{values}" is not a map', path)
        for key in values:
            if key not in schemas:
                raise self.fail(f"Unknown Property {key}", path, (*path, key))
        for key, schema in schemas.items():
            if values.get(key) is None:
                if schema.required and not _aliased(key, values):
                    raise self.fail(f"Property {key} not assigned", path)
                continue
            self.value(schema, values[key], (*path, key))

    def value(self, schema: PropertySchema, value: Any, path: Path) -> None:
        if function_call(value) is not None:
            return
        problem = _type_problem(schema.type, value)
        if problem is not None:
            raise self.fail(problem, path)
        if isinstance(schema.schema, PropertySchema) and isinstance(value, list):
            for index, item in enumerate(value):
                self.value(schema.schema, item, (*path, index))
        elif isinstance(schema.schema, Mapping):
            self.properties(schema.schema, value, path)
        for constraint in schema.constraints:
            if constraint.kind == "custom_constraint":
                self.checks.append(CustomCheck(constraint.value, value, path,
                                               self.line_of(path) if self.line_of else None))
                continue
            problem = constraint.violation(_typed(schema.type, value))
            if problem is not None:
                raise self.fail(problem, path)


def _aliased(key: str, values: Mapping[str, Any]) -> bool:
    # heat translates the deprecated network_id (and a server network's uuid) into network
    return key == "network" and values.get("network_id") is not None


def _type_problem(kind: str, value: Any) -> str | None:
    if kind == "string" and (isinstance(value, float) or not isinstance(value, str | int | bool)):
        return f"Value must be a string; got {value!r}"
    if kind == "integer":
        try:
            int(value)
            if isinstance(value, float) and value != int(value):
                raise ValueError
        except (TypeError, ValueError):
            return f"Value '{value}' is not an integer"
    if kind == "number":
        try:
            float(value)
        except (TypeError, ValueError):
            return f"could not convert string to float: '{value}'"
    if kind == "boolean" and not isinstance(value, bool) and str(value).lower() not in ("true", "false"):
        return f'"{str(value).lower() if isinstance(value, str) else value}" is not a valid boolean'
    if kind == "list" and not isinstance(value, list):
        return f'"{value!r}" is not a list'
    if kind == "map" and not isinstance(value, Mapping):
        return f'"{value}" is not a map'
    return None


def _typed(kind: str, value: Any) -> Any:
    if kind == "integer":
        return int(value)
    if kind == "number":
        return float(value)
    return value


def validate_properties(definition: ResourceDefinition, *, line_of: LineOf | None = None,
                        resource_type: ResourceType | None = None, path: Path | None = None) -> tuple[CustomCheck, ...]:
    """Refuse unknown, missing and wrongly typed literal properties; return the cloud lookups literal values need.

    Values that are still function calls are skipped: call again with the resolved
    properties (``dataclasses.replace(definition, properties=resolved)``) to check those too.
    """
    kind = resource_type or RESOURCE_TYPES.get(definition.type)
    if kind is None:
        return ()
    checker = _Checker(line_of)
    where = path if path is not None else ("resources", definition.name, "properties")
    checker.properties(kind.properties, definition.properties, where)
    return tuple(checker.checks)


def unsupported_properties(definition: ResourceDefinition) -> tuple[Path, ...]:
    """The places in ``definition`` that set a property heat knows but Tether does not act on."""
    kind = RESOURCE_TYPES.get(definition.type)
    if kind is None:
        return ()
    found: list[Path] = []
    _collect_unsupported(kind.properties, definition.properties, ("resources", definition.name, "properties"), found)
    return tuple(found)


def _collect_unsupported(schemas: Mapping[str, PropertySchema], values: Any, path: Path, found: list[Path]) -> None:
    if not isinstance(values, Mapping) or function_call(values) is not None:
        return
    for key, value in values.items():
        schema = schemas.get(key)
        if schema is None or value is None:
            continue
        if not schema.supported:
            found.append((*path, key))
        elif isinstance(schema.schema, Mapping):
            _collect_unsupported(schema.schema, value, (*path, key), found)
        elif isinstance(schema.schema, PropertySchema) and isinstance(schema.schema.schema, Mapping) \
                and isinstance(value, list):
            for index, item in enumerate(value):
                _collect_unsupported(schema.schema.schema, item, (*path, key, index), found)


def decline_unsupported(definition: ResourceDefinition, *, line_of: LineOf | None = None) -> None:
    """Raise a 400 naming the first property Tether would otherwise have to ignore."""
    for path in unsupported_properties(definition):
        raise StackValidationFailed(
            f"Tether does not implement the property {path[-1]} of {definition.type}",
            path=path, line=line_of(path) if line_of else None)


def replacement_needed(type_name: str, old: Mapping[str, Any], new: Mapping[str, Any], *,
                       resource_type: ResourceType | None = None) -> bool:
    """True if a property that changed cannot be updated in place (heat's update_allowed)."""
    kind = resource_type or RESOURCE_TYPES.get(type_name)
    if kind is None:
        return True
    for key in set(old) | set(new):
        schema = kind.properties.get(key)
        default = schema.default if schema is not None else None
        before = old.get(key) if old.get(key) is not None else default
        after = new.get(key) if new.get(key) is not None else default
        if before != after and (schema is None or not schema.update_allowed):
            return True
    return False
