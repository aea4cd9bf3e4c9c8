"""Template parameters: their declarations, and the values a stack gets for them, as heat decides.

Values come, first found wins, from the API's ``parameters``, the environment's
``parameters``, its ``parameter_defaults``, then the declared default. Custom
constraints (a flavor, an image, a network by name) need the cloud, so they come
back as checks for the service instead of being checked here.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from tether.domain.orchestration.errors import Path, StackValidationFailed

PARAMETER_TYPES = ("string", "number", "boolean", "json", "comma_delimited_list")
_TYPE_ALIASES = {"String": "string", "Number": "number", "Boolean": "boolean", "Json": "json",
                 "CommaDelimitedList": "comma_delimited_list"}
PARAMETER_KEYS = frozenset({"type", "description", "default", "label", "hidden", "constraints", "tags", "immutable"})
CONSTRAINT_KINDS = ("allowed_values", "range", "length", "allowed_pattern", "modulo", "custom_constraint")
# heat's pseudo parameters, always there for get_param; the caller supplies their values
IMPLICIT_PARAMETERS = ("OS::stack_name", "OS::stack_id", "OS::project_id")
_TRUE = frozenset({"1", "t", "true", "on", "y", "yes"})
_FALSE = frozenset({"0", "f", "false", "off", "n", "no"})


@dataclass(frozen=True)
class Constraint:
    kind: str   # one of CONSTRAINT_KINDS
    value: Any  # the allowed list, {"min":..,"max":..}, the pattern, {"step":..,"offset":..} or the custom name
    description: str | None = None

    def violation(self, value: Any) -> str | None:
        """heat's words for why ``value`` breaks this constraint, or None if it holds (custom ones always hold here)."""
        if self.kind == "custom_constraint":
            return None
        try:
            if _holds(self, value):
                return None
        except (TypeError, ValueError):
            pass  # a range on a value that is no number, a length on one that has none: it does not hold
        return self.description or _explain(self, value)


@dataclass(frozen=True)
class ParameterSchema:
    name: str
    type: str
    default: Any = None
    description: str = ""
    label: str | None = None
    hidden: bool = False
    constraints: tuple[Constraint, ...] = ()
    immutable: bool = False

    @property
    def custom_constraints(self) -> tuple[str, ...]:
        return tuple(c.value for c in self.constraints if c.kind == "custom_constraint")


@dataclass(frozen=True)
class CustomCheck:
    """A value the service must look up in the cloud: ``constraint`` names what it must be."""

    constraint: str  # "nova.flavor" | "glance.image" | "neutron.network" | "neutron.subnet" | "neutron.port" | ...
    value: Any
    path: Path
    line: int | None = None


@dataclass(frozen=True)
class ResolvedParameters:
    values: Mapping[str, Any]
    custom_checks: tuple[CustomCheck, ...] = ()


class _EnvironmentLike(Protocol):
    @property
    def parameters(self) -> Mapping[str, Any]: ...
    @property
    def parameter_defaults(self) -> Mapping[str, Any]: ...


class _TemplateLike(Protocol):
    # template.Template, seen through what resolving needs (template.py imports this module)
    @property
    def parameters(self) -> Mapping[str, ParameterSchema]: ...
    @property
    def environment(self) -> _EnvironmentLike: ...

    def line_of(self, path: Path) -> int | None: ...


def parse_parameter(name: str, raw: Any, *, line_of: Any = None) -> ParameterSchema:
    """One entry of the ``parameters`` section, refused in heat's words when malformed."""
    path: Path = ("parameters", name)

    def fail(message: str, *where: str | int) -> StackValidationFailed:
        at = (*path, *where)
        return StackValidationFailed(message, path=at, line=line_of(at) if line_of else None)

    if not isinstance(raw, Mapping):
        raise fail("Invalid parameter, expected a mapping")
    unknown = sorted(set(raw) - PARAMETER_KEYS)
    if unknown:
        raise fail(f"Invalid key '{unknown[0]}' for parameter", unknown[0])
    if "type" not in raw:
        raise fail(f"Missing parameter type for parameter: {name}")
    kind = _TYPE_ALIASES.get(raw["type"], raw["type"])
    if kind not in PARAMETER_TYPES:
        raise fail(f'Invalid type ({raw["type"]})', "type")
    constraints = tuple(_parse_constraints(raw.get("constraints") or [], fail))
    schema = ParameterSchema(name=name, type=kind, default=raw.get("default"),
                             description=str(raw.get("description") or ""), label=raw.get("label"),
                             hidden=_to_bool(raw.get("hidden", False)) is True,
                             constraints=constraints, immutable=_to_bool(raw.get("immutable", False)) is True)
    if schema.default is not None:
        try:
            check_value(schema, schema.default)
        except StackValidationFailed as error:
            raise fail(f"Invalid default {schema.default} ({error.error_message})", "default") from None
    return schema


def _parse_constraints(raw: Any, fail: Any) -> list[Constraint]:
    if not isinstance(raw, list):
        raise fail("Invalid parameter constraints, expected a list", "constraints")
    constraints = []
    for index, item in enumerate(raw):
        kinds = [k for k in item if k in CONSTRAINT_KINDS] if isinstance(item, Mapping) else []
        if len(kinds) != 1:
            raise fail("No constraint expressed", "constraints", index)
        kind = kinds[0]
        value = item[kind]
        if kind in ("range", "length") and not (isinstance(value, Mapping) and ("min" in value or "max" in value)):
            raise fail(f"A {kind} constraint must have a min value and/or a max value specified.",
                       "constraints", index)
        if kind == "modulo" and not (isinstance(value, Mapping) and "step" in value and "offset" in value):
            raise fail("A modulo constraint must have a step value and an offset value specified.",
                       "constraints", index)
        if kind == "allowed_values" and (isinstance(value, str) or not isinstance(value, Sequence)):
            raise fail("AllowedValues must be a list", "constraints", index)
        if kind == "allowed_pattern":
            try:
                re.compile(str(value))
            except re.error as error:
                raise fail(f"Invalid allowed_pattern: {error}", "constraints", index) from None
        constraints.append(Constraint(kind, value, item.get("description")))
    return constraints


def check_value(schema: ParameterSchema, value: Any) -> Any:
    """``value`` converted to the parameter's type and checked against its constraints (custom ones excepted)."""
    try:
        converted = convert(schema.type, value)
    except ValueError as error:
        raise StackValidationFailed(f"Parameter '{schema.name}' is invalid: {error}") from None
    for constraint in schema.constraints:
        problem = constraint.violation(converted)
        if problem is not None:
            raise StackValidationFailed(f"Parameter '{schema.name}' is invalid: {problem}")
    return converted


def convert(kind: str, value: Any) -> Any:
    if kind == "number":
        if isinstance(value, bool):
            raise ValueError(f'Value "{value}" is invalid for data type "number".')
        try:
            return _to_number(value)
        except (TypeError, ValueError):
            raise ValueError(f"could not convert string to float: '{value}'") from None
    if kind == "boolean":
        result = _to_bool(value)
        if result is None:
            raise ValueError(f"Unrecognized value '{value}', acceptable values are: "
                             "'0', '1', 'f', 'false', 'n', 'no', 'off', 'on', 't', 'true', 'y', 'yes'")
        return result
    if kind == "comma_delimited_list":
        if isinstance(value, list):
            return [str(item) for item in value]
        if not isinstance(value, str):
            raise ValueError(f"Value must be a comma-delimited list string: {value}")
        return [] if value == "" else value.split(",")
    if kind == "json":
        if isinstance(value, str):
            try:
                parsed = json.loads(value) if value else {}
            except ValueError as error:
                raise ValueError(f"Value must be valid JSON: {error}") from None
        else:
            parsed = value
        if not isinstance(parsed, Mapping | list):
            raise ValueError(f"Value must be valid JSON: {value!r} is not a map or a list")
        return parsed
    if isinstance(value, Mapping | list):
        raise ValueError(f'Value "{value}" is invalid for data type "string".')
    return "true" if value is True else "false" if value is False else str(value)


def _to_number(value: Any) -> int | float:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return value
    text = str(value).strip()
    try:
        return int(text)
    except ValueError:
        number = float(text)
        if math.isnan(number) or math.isinf(number):
            raise ValueError(text) from None
        return number


def _to_bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    return True if text in _TRUE else False if text in _FALSE else None


def _holds(constraint: Constraint, value: Any) -> bool:
    kind, spec = constraint.kind, constraint.value
    if kind == "allowed_values":
        # heat: a list value must have every element allowed; numbers compare as numbers
        allowed = [_comparable(a) for a in spec]
        items = value if isinstance(value, list) else [value]
        return all(_comparable(item) in allowed for item in items)
    if kind == "range":
        number = _to_number(value)
        return not (("min" in spec and number < spec["min"]) or ("max" in spec and number > spec["max"]))
    if kind == "length":
        size = len(value)
        return not (("min" in spec and size < spec["min"]) or ("max" in spec and size > spec["max"]))
    if kind == "allowed_pattern":
        return re.fullmatch(str(spec), str(value)) is not None
    if kind == "modulo":
        return _to_number(value) % spec["step"] == spec["offset"]
    return True


def _comparable(value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return value
    try:
        return _to_number(value)
    except ValueError:
        return value


def _explain(constraint: Constraint, value: Any) -> str:
    kind, spec = constraint.kind, constraint.value
    if kind == "allowed_values":
        allowed = ", ".join(json.dumps(a) for a in spec)
        return f"{json.dumps(value)} is not an allowed value [{allowed}]"
    if kind == "range":
        return f"{value} is out of range (min: {spec.get('min')}, max: {spec.get('max')})"
    if kind == "length":
        size = len(value) if hasattr(value, "__len__") else value  # a length on a number: say what it was
        return f"length ({size}) is out of range (min: {spec.get('min')}, max: {spec.get('max')})"
    if kind == "allowed_pattern":
        return f'"{value}" does not match pattern "{spec}"'
    return f"{value} is not a multiple of {spec['step']} with an offset of {spec['offset']}"


def resolve_parameters(template: _TemplateLike, given: Mapping[str, Any]) -> ResolvedParameters:
    """The value of every declared parameter, converted and checked, plus the lookups left for the cloud."""
    environment = template.environment
    for source, names in (("parameters", given), ("environment", environment.parameters)):
        for name in names:
            if name not in template.parameters and name not in IMPLICIT_PARAMETERS:
                raise StackValidationFailed(f"The Parameter ({name}) was not defined in template.",
                                            path=() if source == "parameters" else ("parameters",))
    values: dict[str, Any] = {name: given[name] for name in IMPLICIT_PARAMETERS if name in given}
    checks: list[CustomCheck] = []
    for name, schema in template.parameters.items():
        path: Path = ("parameters", name)
        for layer in (given, environment.parameters, environment.parameter_defaults):
            if name in layer and layer[name] is not None:
                raw = layer[name]
                break
        else:
            if schema.default is None:
                raise StackValidationFailed(f"The Parameter ({name}) was not provided.")
            raw = schema.default
        value = check_value(schema, raw)
        values[name] = value
        line = template.line_of(path)
        for constraint in schema.custom_constraints:
            # a list of images is checked item by item, as heat's custom constraints are
            items = list(enumerate(value)) if isinstance(value, list) else [(None, value)]
            checks += [CustomCheck(constraint, item, path if index is None else (*path, index), line)
                       for index, item in items]
    return ResolvedParameters(values=values, custom_checks=tuple(checks))
