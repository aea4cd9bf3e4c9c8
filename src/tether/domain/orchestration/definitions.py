"""What a parsed template is made of: resource and output definitions and the environment."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ResourceDefinition:
    name: str
    type: str  # after resource_registry mapping; a nested template keeps its file name in nested_template
    properties: Mapping[str, Any]  # raw: may hold unresolved function calls ({"get_param": "x"})
    depends_on: tuple[str, ...] = ()
    deletion_policy: str | None = None
    update_policy: Mapping[str, Any] = field(default_factory=dict)
    metadata: Mapping[str, Any] = field(default_factory=dict)
    nested_template: str | None = None
    description: str = ""


@dataclass(frozen=True)
class OutputDefinition:
    name: str
    value: Any
    description: str = ""


@dataclass(frozen=True)
class Environment:
    parameters: Mapping[str, Any] = field(default_factory=dict)
    parameter_defaults: Mapping[str, Any] = field(default_factory=dict)
    resource_registry: Mapping[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"parameters": dict(self.parameters), "parameter_defaults": dict(self.parameter_defaults),
                "resource_registry": dict(self.resource_registry)}
