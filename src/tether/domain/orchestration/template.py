"""Parsing a HOT template (and its environment and files) into a checked parse tree.

Everything heat refuses before creating anything is refused here, with heat's
words and the place: the path, and the line when the template came as text.
"""

from __future__ import annotations

import copy
import graphlib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from tether.domain.orchestration.definitions import Environment, OutputDefinition, ResourceDefinition
from tether.domain.orchestration.errors import (
    CircularDependency,
    InvalidTemplateReference,
    InvalidTemplateVersion,
    Path,
    StackValidationFailed,
    UnknownResourceType,
)
from tether.domain.orchestration.functions import calls, check_arguments, named_parameters, named_resources, references
from tether.domain.orchestration.parameters import (
    IMPLICIT_PARAMETERS,
    CustomCheck,
    ParameterSchema,
    parse_parameter,
)
from tether.domain.orchestration.resource_group import member_definition
from tether.domain.orchestration.resource_types import (
    RESOURCE_TYPES,
    PropertySchema,
    ResourceType,
    validate_properties,
)
from tether.domain.orchestration.source import Located, load
from tether.domain.orchestration.versions import DATED_VERSIONS, RELEASE_NAMES, VERSIONS

__all__ = ["Environment", "Located", "OutputDefinition", "ResourceDefinition", "Template", "parse_template"]

SECTIONS = ("heat_template_version", "description", "parameter_groups", "parameters", "resources", "outputs",
            "conditions")
RESOURCE_KEYS = ("type", "properties", "metadata", "depends_on", "deletion_policy", "update_policy", "description")
DELETION_POLICIES = ("Delete", "Retain", "Snapshot")
ENVIRONMENT_SECTIONS = ("parameters", "parameter_defaults", "resource_registry", "encrypted_param_names",
                        "event_sinks", "parameter_merge_strategies")
MAX_NESTING = 5  # heat's max_nested_stack_depth
# a nested template's parameter types as the nested stack resource's property types (heat's from_parameter)
_PROPERTY_TYPE_OF = {"string": "string", "number": "number", "boolean": "boolean", "json": "map",
                     "comma_delimited_list": "list"}


@dataclass(frozen=True)
class Template:
    version: str
    description: str
    parameters: Mapping[str, ParameterSchema]
    resources: Mapping[str, ResourceDefinition]
    outputs: Mapping[str, OutputDefinition]
    environment: Environment
    files: Mapping[str, str]
    # cloud lookups that literal property values need (a flavor, an image, a network by name)
    custom_checks: tuple[CustomCheck, ...] = ()
    # the schema of every type the template uses, nested templates included
    resource_types: Mapping[str, ResourceType] = field(default_factory=dict, repr=False)
    nested: Mapping[str, Template] = field(default_factory=dict, repr=False)
    source: Located = field(default_factory=lambda: Located({}), repr=False, compare=False)

    def line_of(self, path: Path) -> int | None:
        return self.source.line_of(path)

    def resource_type(self, name: str) -> ResourceType:
        """The schema of resource ``name``'s type."""
        return self.resource_types[self.resources[name].type]

    def dependencies(self) -> Mapping[str, frozenset[str]]:
        """Resource -> the resources it needs: depends_on, and whatever its properties and metadata name."""
        return {name: frozenset(definition.depends_on) | references(definition.properties)
                | references(definition.metadata) for name, definition in self.resources.items()}

    def creation_order(self) -> list[list[str]]:
        """Batches in creation order; the resources of one batch need nothing from each other."""
        sorter = graphlib.TopologicalSorter(self.dependencies())
        sorter.prepare()
        batches = []
        while sorter.is_active():
            ready = sorted(sorter.get_ready(), key=list(self.resources).index)
            batches.append(ready)
            sorter.done(*ready)
        return batches

    def as_dict(self) -> dict[str, Any]:
        """The template as heat's GET .../template returns it: as it was given."""
        return copy.deepcopy(dict(self.source.data))


def parse_template(source: str | Mapping[str, Any], *, files: Mapping[str, str] | None = None,
                   environment: str | Mapping[str, Any] | None = None) -> Template:
    """Parse and check a template; raise StackValidationFailed (a 400) naming the place of the first problem."""
    env = _parse_environment(load(environment, "environment"))
    return _Parser(dict(files or {}), env).parse(source, depth=0)


def _parse_environment(located: Located) -> Environment:
    data = located.data
    if not isinstance(data, Mapping):
        raise StackValidationFailed("The environment is not a valid YAML mapping data type.")
    for section in data:
        if section not in ENVIRONMENT_SECTIONS:
            raise StackValidationFailed(f'environment has wrong section "{section}"', line=located.line_of((section,)))
    for section in ("parameters", "parameter_defaults", "resource_registry"):
        if not isinstance(data.get(section) or {}, Mapping):
            raise StackValidationFailed(f'"{section}" must be a mapping', path=(section,),
                                        line=located.line_of((section,)))
    return Environment(parameters=dict(data.get("parameters") or {}),
                       parameter_defaults=dict(data.get("parameter_defaults") or {}),
                       resource_registry=dict(data.get("resource_registry") or {}))


@dataclass
class _Parser:
    files: dict[str, str]
    environment: Environment
    nested: dict[str, Template] = field(default_factory=dict)

    def parse(self, source: str | Mapping[str, Any], *, depth: int, name: str = "template") -> Template:
        located = load(source, name)
        data = located.data
        if not isinstance(data, Mapping):
            raise StackValidationFailed("The template is not a JSON object or YAML mapping.")

        def fail(message: str, path: Path, **kwargs: Any) -> StackValidationFailed:
            return StackValidationFailed(message, path=path, line=located.line_of(path), **kwargs)

        version = _version(data, located)
        for section in data:
            if section not in SECTIONS:
                raise fail(f"The template section is invalid: {section}", (section,), error="")
        if data.get("conditions"):
            raise fail("Tether does not implement conditions", ("conditions",))

        parameters = self._parameters(data.get("parameters"), located, fail)
        types: dict[str, ResourceType] = {}
        resources = self._resources(data.get("resources"), located, fail, types, depth)
        outputs = _outputs(data.get("outputs"), fail)
        template = Template(version=version, description=str(data.get("description") or ""), parameters=parameters,
                            resources=resources, outputs=outputs, environment=self.environment, files=self.files,
                            resource_types=types, nested=dict(self.nested), source=located)
        _check_references(template, fail)
        _check_cycles(template, fail)
        checks = _check_properties(template)
        return replace(template, custom_checks=checks)

    def _parameters(self, raw: Any, located: Located, fail: Any) -> dict[str, ParameterSchema]:
        if not isinstance(raw or {}, Mapping):
            raise fail('"parameters" must contain a map of parameter maps', ("parameters",))
        return {name: parse_parameter(name, schema, line_of=located.line_of) for name, schema in (raw or {}).items()}

    def _resources(self, raw: Any, located: Located, fail: Any, types: dict[str, ResourceType],
                   depth: int) -> dict[str, ResourceDefinition]:
        if not isinstance(raw or {}, Mapping):
            raise fail('"resources" must contain a map of resource maps', ("resources",))
        resources = {}
        for name, body in (raw or {}).items():
            path: Path = ("resources", name)
            if not isinstance(body, Mapping):
                raise fail(f'"resources" must contain a map of resource maps. Found a [{type(body)}] instead', path)
            for key in body:
                if key not in RESOURCE_KEYS:
                    raise fail(f'"{key}" is not a valid keyword inside a resource definition', (*path, key))
            if "type" not in body:
                raise fail(f'Resource {name} is missing "type"', path)
            if not isinstance(body["type"], str):
                raise fail(f"Resource {name} type type must be string", (*path, "type"))
            kind = self._resource_type(body["type"], (*path, "type"), fail, depth)
            types[kind.name] = kind
            resources[name] = _definition(name, body, kind, fail)
            if kind.name == "OS::Heat::ResourceGroup":
                self._group_member_type(resources[name], fail, types, depth)
        return resources

    def _group_member_type(self, group: ResourceDefinition, fail: Any, types: dict[str, ResourceType],
                           depth: int) -> None:
        member = group.properties.get("resource_def")
        if isinstance(member, Mapping) and isinstance(member.get("type"), str):
            path = ("resources", group.name, "properties", "resource_def", "type")
            kind = self._resource_type(member["type"], path, fail, depth)
            types[kind.name] = kind

    def _resource_type(self, type_name: str, path: Path, fail: Any, depth: int) -> ResourceType:
        """The type ``type_name`` stands for after the environment's resource_registry, nested templates parsed."""
        seen = []
        target = type_name
        while target in self.environment.resource_registry and target not in seen:
            seen.append(target)
            target = self.environment.resource_registry[target]
        if target in RESOURCE_TYPES:
            return RESOURCE_TYPES[target]
        if isinstance(target, str) and (target in self.files or target.endswith((".yaml", ".yml", ".template"))):
            return self._nested_type(target, path, fail, depth)
        raise UnknownResourceType(type_name, path=path, line=fail("", path).line)

    def _nested_type(self, file_name: str, path: Path, fail: Any, depth: int) -> ResourceType:
        if file_name not in self.files:
            raise fail(f'Could not fetch remote template "{file_name}": not found in "files"', path)
        if depth + 1 > MAX_NESTING:
            raise fail(f"Recursion depth exceeds {MAX_NESTING}.", path)
        if file_name not in self.nested:
            try:
                self.nested[file_name] = self.parse(self.files[file_name], depth=depth + 1,
                                                    name=f"template {file_name}")
            except StackValidationFailed as error:
                raise fail(f"Failed to validate nested template {file_name}: {error}", path, error="") from None
        nested = self.nested[file_name]
        properties = {name: PropertySchema(name, _PROPERTY_TYPE_OF[schema.type], required=schema.default is None,
                                           default=schema.default, update_allowed=True)
                      for name, schema in nested.parameters.items()}
        return ResourceType(file_name, properties, frozenset(nested.outputs) | {"show"}, any_attribute=True,
                            nested_template=file_name)


def _version(data: Mapping[str, Any], located: Located) -> str:
    if "heat_template_version" not in data:
        raise InvalidTemplateVersion("Template version was not provided")
    version = str(data["heat_template_version"])
    if version not in VERSIONS:
        available = ", ".join(sorted((*DATED_VERSIONS, *RELEASE_NAMES)))
        raise InvalidTemplateVersion(
            f'"heat_template_version: {version}". "heat_template_version" should be one of: {available}',
            line=located.line_of(("heat_template_version",)))
    return version


def _definition(name: str, body: Mapping[str, Any], kind: ResourceType, fail: Any) -> ResourceDefinition:
    path: Path = ("resources", name)
    depends_on = body.get("depends_on") or []
    if isinstance(depends_on, str):
        depends_on = [depends_on]
    if not isinstance(depends_on, list) or not all(isinstance(d, str) for d in depends_on):
        raise fail(f"Resource {name} depends_on must be a list of strings", (*path, "depends_on"))
    policy = body.get("deletion_policy")
    if policy is not None and policy not in DELETION_POLICIES:
        raise fail(f'Invalid deletion policy "{policy}"', (*path, "deletion_policy"))
    for key in ("properties", "metadata", "update_policy"):
        if not isinstance(body.get(key) or {}, Mapping):
            raise fail(f"Resource {name} {key} type must be Map", (*path, key))
    return ResourceDefinition(name=name, type=kind.name, properties=dict(body.get("properties") or {}),
                              depends_on=tuple(depends_on), deletion_policy=policy,
                              update_policy=dict(body.get("update_policy") or {}),
                              metadata=dict(body.get("metadata") or {}), nested_template=kind.nested_template,
                              description=str(body.get("description") or ""))


def _outputs(raw: Any, fail: Any) -> dict[str, OutputDefinition]:
    if not isinstance(raw or {}, Mapping):
        raise fail(f"Output definitions must be a map. Found a {type(raw).__name__} instead", ("outputs",),
                   error="Output validation error")
    outputs = {}
    for name, body in (raw or {}).items():
        if not isinstance(body, Mapping) or "value" not in body:
            raise fail("Each output definition must contain a value key.", ("outputs", name),
                       error="Output validation error")
        outputs[name] = OutputDefinition(name=name, value=body["value"], description=str(body.get("description") or ""))
    return outputs


def _check_references(template: Template, fail: Any) -> None:
    """Every function call well formed, and every resource, attribute and parameter it names there."""
    known_parameters = set(template.parameters) | set(IMPLICIT_PARAMETERS)
    places: list[tuple[str, Path, Any]] = []
    for name, definition in template.resources.items():
        for section in ("properties", "metadata"):
            places.append((name, ("resources", name, section), getattr(definition, section)))
        for index, dependency in enumerate(definition.depends_on):
            if dependency not in template.resources:
                at: Path = ("resources", name, "depends_on") + ((index,) if len(definition.depends_on) > 1 else ())
                raise InvalidTemplateReference(dependency, name, path=at, line=template.line_of(at))
    places += [(name, ("outputs", name, "value"), output.value) for name, output in template.outputs.items()]
    for owner, path, value in places:
        try:
            check_arguments(value, path)
        except StackValidationFailed as error:
            raise fail(error.error_message, error.path) from None
        for parameter, at in named_parameters(value, path):
            if parameter not in known_parameters:
                raise fail(f"The Parameter ({parameter}) was not provided.", at, error="")
        for resource, at in named_resources(value, path):
            if resource not in template.resources:
                raise InvalidTemplateReference(resource, owner, path=at, line=template.line_of(at))
        _check_attributes(template, value, path, fail)


def _check_attributes(template: Template, value: Any, path: Path, fail: Any) -> None:
    for function, args, at in calls(value, path):
        if function == "get_attr" and isinstance(args[0], str) and isinstance(args[1], str):
            kind = template.resource_type(args[0])
            if not kind.has_attribute(args[1]):
                raise fail(f"The Referenced Attribute ({args[0]} {args[1]}) is incorrect.", at, error="")


def _check_cycles(template: Template, fail: Any) -> None:
    try:
        graphlib.TopologicalSorter(template.dependencies()).prepare()
    except graphlib.CycleError as error:
        cycle = list(error.args[1])
        raise CircularDependency(cycle, line=template.line_of(("resources", cycle[0]))) from None


def _check_properties(template: Template) -> tuple[CustomCheck, ...]:
    checks: list[CustomCheck] = []
    for definition in template.resources.values():
        kind = template.resource_types[definition.type]
        checks += validate_properties(definition, line_of=template.line_of, resource_type=kind)
        if kind.name == "OS::Heat::ResourceGroup":
            checks += _check_group_member(template, definition)
    return tuple(checks)


def _check_group_member(template: Template, group: ResourceDefinition) -> list[CustomCheck]:
    """A group's resource_def checked as its first member would be, at the group's place in the template."""
    resource_def = group.properties.get("resource_def")
    if not isinstance(resource_def, Mapping) or not isinstance(resource_def.get("type"), str):
        return []
    index_var = group.properties.get("index_var")
    member = member_definition(resource_def, 0, index_var if isinstance(index_var, str) else "%index%")
    prefix: Path = ("resources", group.name, "properties", "resource_def")
    kind = template.resource_types[template_type(template, resource_def["type"])]
    checks = validate_properties(replace(member, name=group.name), line_of=template.line_of,
                                 resource_type=kind, path=(*prefix, "properties"))
    return list(checks)


def template_type(template: Template, type_name: str) -> str:
    """The name ``type_name`` is known by after the resource_registry (a file name for a nested template)."""
    seen = []
    while type_name in template.environment.resource_registry and type_name not in seen:
        seen.append(type_name)
        type_name = template.environment.resource_registry[type_name]
    return type_name

