"""A stack's template read back, and the values its functions take now.

The template and the parameters are kept as the user gave them (the stack's row); what
``get_resource`` and ``get_attr`` name is read from the resources' rows and their physical
resources when a resource is about to be made, or when outputs are shown.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tether.domain.errors import TetherError
from tether.domain.orchestration.functions import references, resolve
from tether.domain.orchestration.parameters import resolve_parameters
from tether.domain.orchestration.stacks import Stack, StackResource
from tether.domain.orchestration.template import Template, parse_template
from tether.services.context import RequestContext
from tether.services.orchestration.resources.base import Handler
from tether.store.database import Store

# A stack's template changes only with a new action (a new traversal): parsed once per action,
# not once per resource (a group of 100 members would parse its template 100 times).
_PARSED: OrderedDict[tuple[str, str], Template] = OrderedDict()
_PARSED_KEPT = 256


def template_of(stack: Stack) -> Template:
    key = (stack.id, stack.traversal)
    parsed = _PARSED.get(key)
    if parsed is None:
        parsed = parse_template(stack.template, files=stack.files, environment=stack.environment)
        _PARSED[key] = parsed
        if len(_PARSED) > _PARSED_KEPT:
            _PARSED.popitem(last=False)
    return parsed


def given_parameters(stack: Stack) -> dict[str, Any]:
    """The parameters as the user gave them, with the ones heat provides itself."""
    return {**stack.parameters, "OS::stack_name": stack.name, "OS::stack_id": stack.id,
            "OS::project_id": stack.project_id}


@dataclass
class _Resolver:
    parameters: Mapping[str, Any]
    resources: Mapping[str, StackResource]
    attributes: Mapping[str, Mapping[str, Any]]

    def parameter(self, name: str) -> Any:
        return self.parameters[name]

    def resource_id(self, name: str) -> Any:
        resource = self.resources.get(name)
        return resource.physical_id if resource is not None else None

    def attribute(self, name: str, path: tuple[Any, ...]) -> Any:
        value: Any = self.attributes.get(name, {})
        for key in path:
            try:
                value = value[key]
            except (KeyError, IndexError, TypeError):
                return None  # heat resolves an attribute it cannot read to None
        return value


@dataclass(eq=False)
class Properties:
    store: Store
    handlers: Mapping[str, Handler]

    def dependencies(self, stack: Stack, resources: list[StackResource]) -> dict[str, frozenset[str]]:
        """What each of the stack's resources needs (a resource the template no longer has needs nothing)."""
        declared = template_of(stack).dependencies()
        names = {resource.name for resource in resources}
        return {name: frozenset(declared.get(name, frozenset())) & names for name in names}

    async def of(self, stack: Stack, resource: StackResource, ctx: RequestContext) -> dict[str, Any]:
        """The resource's properties with every function resolved, as it is about to be made."""
        template = template_of(stack)
        definition = template.resources[resource.name]
        resolver = await self._resolver(stack, template, ctx, references(definition.properties))
        return dict(resolve(definition.properties, resolver, path=("resources", resource.name, "properties")) or {})

    async def outputs(self, stack: Stack, ctx: RequestContext) -> list[dict[str, Any]]:
        """Every output, as heat's API shows it: a value, or the error that kept it from one."""
        template = template_of(stack)
        named: set[str] = set()
        for output in template.outputs.values():
            named |= references(output.value)
        resolver = await self._resolver(stack, template, ctx, frozenset(named))
        shown = []
        for name, output in template.outputs.items():
            entry: dict[str, Any] = {"output_key": name, "description": output.description}
            try:
                entry["output_value"] = resolve(output.value, resolver, path=("outputs", name, "value"))
            except TetherError as error:
                entry["output_value"], entry["output_error"] = None, error.message
            shown.append(entry)
        return shown

    async def attributes(self, ctx: RequestContext, resource: StackResource) -> dict[str, Any]:
        try:
            return dict(await self.handlers[resource.type].attributes(ctx, resource))
        except (TetherError, KeyError):
            return {}  # a physical resource that is gone has no attributes

    async def _resolver(self, stack: Stack, template: Template, ctx: RequestContext,
                        named: frozenset[str]) -> _Resolver:
        parameters = resolve_parameters(template, given_parameters(stack)).values
        rows: list[StackResource] = []
        if named:  # only what names other resources needs their rows
            async with self.store.begin() as uow:
                rows = await uow.stack_resources.find(stack_id=stack.id, current=True, name=sorted(named))
        resources = {row.name: row for row in rows}
        attributes: dict[str, Mapping[str, Any]] = {}
        for name in sorted(named):
            row = resources.get(name)
            if row is not None and row.physical_id:
                attributes[name] = await self.attributes(ctx, row)
        return _Resolver(parameters, resources, attributes)
