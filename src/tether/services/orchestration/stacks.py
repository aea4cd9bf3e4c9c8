"""What a user asks of stacks: create, find, list, delete, and what a stack shows.

A template is parsed and checked whole (its syntax, types, references, parameters and their
constraints, the names it gives of flavors, images and networks) before anything is
created: a bad template is refused with the place it is wrong at, and leaves nothing
behind. An accepted action is written (the stack's new state, its resources' rows, a new
traversal) and handed to the engine.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from tether.domain.errors import orchestration as oe
from tether.domain.ids import is_uuid_like, new_uuid
from tether.domain.orchestration import stack_states
from tether.domain.orchestration.errors import StackValidationFailed
from tether.domain.orchestration.parameters import resolve_parameters
from tether.domain.orchestration.resource_types import decline_unsupported
from tether.domain.orchestration.stack_states import DELETE, IN_PROGRESS, state
from tether.domain.orchestration.stacks import Stack, StackEvent, StackResource
from tether.domain.orchestration.template import Template, parse_template
from tether.runtime.runtime import Runtime
from tether.services.context import RequestContext
from tether.services.orchestration import actions
from tether.services.orchestration.engine import Engine
from tether.services.orchestration.lookups import Lookups, NotFoundByName, as_validation_error
from tether.services.orchestration.properties import Properties, given_parameters, template_of
from tether.services.orchestration.records import stack_key
from tether.store.database import Store

STACK_NAME = re.compile(r"^[a-zA-Z][a-zA-Z0-9_.-]{0,254}$")


@dataclass(eq=False)
class Stacks:
    store: Store
    rt: Runtime
    rng: random.Random
    engine: Engine
    lookups: Lookups
    properties: Properties

    # -- checking a template ------------------------------------------------------------

    async def checked_template(self, ctx: RequestContext, template: Any, *, files: Mapping[str, str] | None,
                               environment: Any, parameters: Mapping[str, Any], stack_name: str = "",
                               stack_id: str = "") -> Template:
        """The template, parsed and checked against the cloud; ``StackValidationFailed`` naming the place."""
        if template is None:
            raise oe.OrchestrationBadRequest(reason="Need more arguments")
        parsed = parse_template(template, files=files or {}, environment=environment or {})
        given = {**parameters, "OS::stack_name": stack_name, "OS::stack_id": stack_id,
                 "OS::project_id": ctx.project_id or ""}
        for definition in parsed.resources.values():
            decline_unsupported(definition, line_of=parsed.line_of)  # never accepted and silently dropped
        resolved = resolve_parameters(parsed, given)
        for check in (*resolved.custom_checks, *parsed.custom_checks):
            try:
                await self.lookups.check(ctx, check.constraint, check.value)
            except NotFoundByName as error:
                raise as_validation_error(error, check.value, check.path, check.line) from None
        return parsed

    async def validate_template(self, ctx: RequestContext, template: Any, *, files: Mapping[str, str] | None = None,
                                environment: Any = None, parameters: Mapping[str, Any] | None = None
                                ) -> dict[str, Any]:
        """POST /validate: what heat answers for a template it accepts."""
        parsed = parse_template(template, files=files or {}, environment=environment or {})
        shown: dict[str, Any] = {}
        for name, schema in parsed.parameters.items():
            entry: dict[str, Any] = {"Type": _heat_type(schema.type), "Description": schema.description or "",
                                     "Label": schema.label or name, "NoEcho": str(bool(schema.hidden)).lower()}
            if schema.default is not None:
                entry["Default"] = schema.default
            shown[name] = entry
        return {"Description": parsed.description, "Parameters": shown, "ParameterGroups": []}

    # -- acting ---------------------------------------------------------------------

    async def create_stack(
        self, ctx: RequestContext, *, name: str, template: Any, parameters: Mapping[str, Any] | None = None,
        files: Mapping[str, str] | None = None, environment: Any = None, disable_rollback: bool = True,
        timeout_mins: int | None = None, tags: list[str] | None = None,
    ) -> Stack:
        if not ctx.can_write:
            raise oe.OrchestrationForbidden(action="stacks:create")
        if not isinstance(name, str) or not STACK_NAME.match(name):
            raise oe.InvalidStackName(name=name)
        if timeout_mins is not None and (not isinstance(timeout_mins, int) or timeout_mins <= 0):
            raise oe.OrchestrationBadRequest(reason=f"Invalid timeout value {timeout_mins}")
        stack_id = new_uuid(self.rng)
        parsed = await self.checked_template(ctx, template, files=files, environment=environment,
                                             parameters=parameters or {}, stack_name=name, stack_id=stack_id)
        now = self.rt.now()
        stack = Stack(
            id=stack_id, name=name, project_id=ctx.project_id or "", user_id=ctx.user_id,
            user_roles=sorted(ctx.roles), files=dict(files or {}), environment=_as_mapping(environment),
            parameters=dict(parameters or {}), disable_rollback=bool(disable_rollback), timeout_mins=timeout_mins,
            tags=list(tags or []), template=parsed.as_dict())
        async with self.store.begin() as uow:
            if await uow.stacks.first(project_id=stack.project_id, name=name, deleted_at=None) is not None:
                raise oe.StackExists(stack_name=name)
            await actions.begin_create(uow, self.rng, stack, parsed, now)
        self.engine.start(stack)
        return stack

    async def update_stack(
        self, ctx: RequestContext, name_or_id: str, *, template: Any = None,
        parameters: Mapping[str, Any] | None = None, files: Mapping[str, str] | None = None,
        environment: Any = None, existing: bool = False, disable_rollback: bool | None = None,
        timeout_mins: int | None = None, tags: list[str] | None = None, clear_parameters: list[str] | None = None,
    ) -> Stack:
        """PUT (a new template and parameters) or PATCH (``existing``: what is not given is kept)."""
        if not ctx.can_write:
            raise oe.OrchestrationForbidden(action="stacks:update")
        stack = await self.find_stack(ctx, name_or_id)
        if stack_states.is_in_progress(stack.state):
            raise oe.ActionInProgress(stack_name=stack.name, action=stack.action)
        if not stack_states.STACK_STATES.can(stack.state, "update"):
            raise oe.OrchestrationBadRequest(reason=f"Updating a stack when it is {stack.state} is not supported.")
        if existing:
            template = stack.template if template is None else template
            kept = {key: value for key, value in stack.parameters.items() if key not in (clear_parameters or ())}
            parameters = {**kept, **(parameters or {})}
            files = {**stack.files, **(files or {})}
            environment = environment if environment is not None else stack.environment
        elif template is None:
            raise oe.OrchestrationBadRequest(reason="Need more arguments")
        parsed = await self.checked_template(ctx, template, files=files, environment=environment,
                                             parameters=parameters or {}, stack_name=stack.name, stack_id=stack.id)
        now = self.rt.now()
        async with self.store.begin() as uow:
            updating = await actions.begin_update(
                uow, self.rng, stack, parsed, now, files=dict(files or {}), environment=_as_mapping(environment),
                parameters=dict(parameters or {}),
                timeout_mins=timeout_mins if timeout_mins is not None else stack.timeout_mins,
                disable_rollback=stack.disable_rollback if disable_rollback is None else disable_rollback,
                tags=stack.tags if tags is None else tags)
            if updating is None:
                raise oe.ActionInProgress(stack_name=stack.name, action="UPDATE")
        self.engine.start(updating)
        return updating

    async def delete_stack(self, ctx: RequestContext, name_or_id: str) -> None:
        """Delete a stack, superseding whatever action it has in progress."""
        if not ctx.can_write:
            raise oe.OrchestrationForbidden(action="stacks:delete")
        stack = await self.find_stack(ctx, name_or_id)
        if stack.state == state(DELETE, IN_PROGRESS):
            return
        now = self.rt.now()
        async with self.store.begin() as uow:
            deleting = await actions.begin_delete(uow, self.rng, stack, now)
        if deleting is None:  # moved meanwhile: look again
            return await self.delete_stack(ctx, name_or_id)
        self.rt.notify(stack_key(stack.id))  # the loop of an action it supersedes stops now, not at its poll
        self.engine.start(deleting)
        return None

    # -- reading ------------------------------------------------------------------------

    async def find_stack(self, ctx: RequestContext, name_or_id: str, *, deleted: bool = False) -> Stack:
        """A stack by id (a deleted one too, when asked) or by name (a live one), as the caller may see it."""
        async with self.store.begin() as uow:
            stack = await uow.stacks.get(name_or_id) if is_uuid_like(name_or_id) else None
            if stack is None or (stack.deleted_at is not None and not deleted):
                stack = await uow.stacks.first(project_id=ctx.project_id, name=name_or_id, deleted_at=None)
        if stack is None or not ctx.owns(stack.project_id):
            raise oe.EntityNotFound(entity="Stack", name=name_or_id)
        return stack

    async def list_stacks(self, ctx: RequestContext, *, all_projects: bool = False, with_deleted: bool = False,
                          nested: bool = False, **filters: Any) -> list[Stack]:
        if all_projects and not ctx.is_admin:
            raise oe.OrchestrationForbidden(action="stacks:global_index")
        if not all_projects:
            filters["project_id"] = ctx.project_id
        if not with_deleted:
            filters["deleted_at"] = None
        if not nested:
            filters["parent_id"] = None
        async with self.store.begin() as uow:
            return await uow.stacks.find(order_by=("created_at", "id"), **filters)

    async def resources(self, stack: Stack) -> list[StackResource]:
        async with self.store.begin() as uow:
            return await uow.stack_resources.find(stack_id=stack.id, current=True, order_by=("created_at", "id"))

    async def resource(self, stack: Stack, name: str) -> StackResource:
        async with self.store.begin() as uow:
            found = await uow.stack_resources.first(stack_id=stack.id, name=name, current=True)
        if found is None:
            raise oe.EntityNotFound(entity="Resource", name=name)
        return found

    async def events(self, stack: Stack, *, resource_name: str | None = None) -> list[StackEvent]:
        filters: dict[str, Any] = {"stack_id": stack.id}
        if resource_name is not None:
            filters["resource_name"] = resource_name
        async with self.store.begin() as uow:
            return await uow.stack_events.find(order_by=("sequence",), **filters)

    async def outputs(self, ctx: RequestContext, stack: Stack) -> list[dict[str, Any]]:
        return await self.properties.outputs(stack, ctx)

    def required_by(self, stack: Stack) -> dict[str, list[str]]:
        """For each resource, the resources that need it (heat's ``required_by``)."""
        users: dict[str, list[str]] = {}
        for name, needs in template_of(stack).dependencies().items():
            for need in sorted(needs):
                users.setdefault(need, []).append(name)
        return users

    async def attributes(self, ctx: RequestContext, resource: StackResource) -> dict[str, Any]:
        """What ``resource show`` lists: every attribute the physical resource has now."""
        if not resource.physical_id:
            return {}
        return await self.properties.attributes(ctx, resource)

    def parameters_shown(self, stack: Stack) -> dict[str, Any]:
        """The parameters as heat's stack show gives them: every value as a string."""
        try:
            values = resolve_parameters(template_of(stack), given_parameters(stack)).values
        except StackValidationFailed:
            values = given_parameters(stack)
        return {name: value if isinstance(value, str) else _as_text(value) for name, value in values.items()}


def _as_text(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, list):
        return ",".join(str(item) for item in value)
    if isinstance(value, dict):
        return json.dumps(value)
    return str(value)


def _as_mapping(environment: Any) -> dict[str, Any]:
    if environment is None or (isinstance(environment, str) and not environment.strip()):
        return {}
    if isinstance(environment, str):
        loaded = yaml.safe_load(environment)
        return dict(loaded or {})
    return dict(environment)


def _heat_type(kind: str) -> str:
    return {"string": "String", "number": "Number", "boolean": "Boolean", "json": "Json",
            "comma_delimited_list": "CommaDelimitedList"}.get(kind, kind)
