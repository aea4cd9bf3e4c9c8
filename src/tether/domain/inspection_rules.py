"""Ironic's inspection rules: what a rule is and which conditions and actions it may name.

A rule's conditions test inspection data and its actions change the node. Each operator and action
takes named arguments (ironic's plugins' signatures), given as an object or, deprecated, as a list
in the signature's order; a condition's operator may be inverted with a leading ``!``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tether.domain.errors import baremetal as be

PHASES = ("main",)
# plugin name -> (required arguments, optional arguments), from ironic's operators and actions modules
OPERATORS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "eq": (("values",), ("force_strings",)), "lt": (("values",), ("force_strings",)),
    "gt": (("values",), ("force_strings",)), "is-empty": (("value",), ()),
    "in-net": (("address", "subnet"), ()), "matches": (("value", "regex"), ()),
    "contains": (("value", "regex"), ()), "one-of": (("value",), ("values",)), "is-none": (("value",), ()),
    "is-true": (("value",), ()), "is-false": (("value",), ()),
}
ACTIONS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "fail": (("msg",), ()), "log": (("msg",), ("level",)), "set-attribute": (("path", "value"), ()),
    "extend-attribute": (("path", "value"), ("unique",)), "del-attribute": (("path",), ()),
    "set-capability": (("name", "value"), ()), "unset-capability": (("name",), ()),
    "add-trait": (("name",), ()), "remove-trait": (("name",), ()),
    "set-plugin-data": (("path", "value", "plugin_data"), ()),
    "extend-plugin-data": (("path", "value", "plugin_data"), ("unique",)),
    "unset-plugin-data": (("path", "plugin_data"), ()),
    "set-port-attribute": (("port_id", "path", "value"), ()),
    "extend-port-attribute": (("port_id", "path", "value"), ("unique",)),
    "del-port-attribute": (("port_id", "path"), ()),
    "api-call": (("url",), ("headers", "proxies", "timeout", "retries", "backoff_factor")),
}
# The actions whose plugin_data ironic supplies itself.
_PLUGIN_DATA_ACTIONS = ("set-plugin-data", "extend-plugin-data", "unset-plugin-data")
MAX_USER_PRIORITY = 9999


@dataclass
class InspectionRule:
    uuid: str
    actions: list[dict[str, Any]] = field(default_factory=list)
    conditions: list[dict[str, Any]] = field(default_factory=list)
    description: str | None = None
    priority: int = 0
    sensitive: bool = False
    phase: str | None = "main"
    created_at: float = 0.0
    updated_at: float = 0.0


def _check_arguments(args: Any, signature: tuple[tuple[str, ...], tuple[str, ...]], supplied: tuple[str, ...]) -> None:
    """ironic's Base.validate: the named arguments a plugin's call takes, no fewer and no others."""
    required, optional = signature
    if isinstance(args, list):
        given = [*args, *([{}] if supplied else [])]
        if len(given) < len(required):
            raise ValueError(f"Not enough arguments provided. Missing: {', '.join(required[len(given):])}")
        args = dict(zip((*required, *optional), given, strict=False))
    if not isinstance(args, dict):
        raise ValueError("args must be either a list or dictionary")
    provided = set(args) | set(supplied)
    problems = []
    missing = [name for name in required if name not in provided]
    unexpected = sorted(provided - set(required) - set(optional))
    if missing:
        problems.append(f"missing required argument(s): {', '.join(missing)}")
    if unexpected:
        problems.append(f"unexpected argument(s): {', '.join(unexpected)}")
    if problems:
        raise ValueError("; ".join(problems))


def check_rule(rule: dict[str, Any]) -> None:
    """ironic's validate_rule for a user's rule (its JSON schema is checked before): the phase, the
    priority, and each condition's and action's plugin and arguments; every problem in one 400."""
    errors = []
    phase = rule.get("phase") or "main"
    if phase not in PHASES:
        errors.append(f"Invalid phase: {phase}. Valid phases are: {', '.join(PHASES)}")
    if rule.get("priority", 0) > MAX_USER_PRIORITY:
        errors.append(f"Priority must be between 0 and {MAX_USER_PRIORITY} for user-defined rules.")
    for condition in rule.get("conditions") or []:
        op = str(condition["op"]).strip().lstrip("!").strip()
        try:
            _check_arguments(condition.get("args", {}), OPERATORS[op], ())
        except (KeyError, ValueError) as error:
            errors.append(f"Invalid parameters for condition operator {op}: {error}")
    for action in rule["actions"]:
        op = action["op"]
        try:
            _check_arguments(action.get("args", {}), ACTIONS[op], ("plugin_data",) if op in _PLUGIN_DATA_ACTIONS
                             else ())
        except (KeyError, ValueError) as error:
            errors.append(f"Invalid parameters for action operator {op}: {error}")
    if len(errors) == 1:
        raise be.Invalid(reason=errors[0])
    if errors:
        raise be.Invalid(reason=f"Multiple validation errors occurred: {'; '.join(errors)}")
