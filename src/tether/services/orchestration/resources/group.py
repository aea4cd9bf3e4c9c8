"""OS::Heat::ResourceGroup: N members of one definition, in a nested stack of their own.

As heat does it: the members ("0", "1", ...) are the resources of a nested stack, so a
member that failed is replaced by the nested stack's own update, and a change of ``count``
is an update in place that adds or removes members (``removal_policies`` name the ones to
remove, and a removed name is never used again).
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tether.domain.errors import TetherError
from tether.domain.orchestration import stack_states
from tether.domain.orchestration.resource_group import member_definition, member_names, skip_list
from tether.domain.orchestration.stacks import Stack, StackResource
from tether.domain.orchestration.template import Template, parse_template
from tether.runtime.runtime import Runtime
from tether.services.context import RequestContext
from tether.services.orchestration import actions
from tether.services.orchestration.resources.base import Handler, ResourceFailed, Run, claim_physical_id
from tether.store.database import Store

if TYPE_CHECKING:
    from tether.services.orchestration.engine import Engine

NESTED_VERSION = "2015-04-30"
POLL_SECONDS = 10.0


def nested_key(stack_id: str) -> tuple[str, str]:
    return ("stack", stack_id)  # the key a stack's end is announced on (the engine's stack_key)


@dataclass(eq=False)
class Group:
    store: Store
    rt: Runtime
    rng: random.Random
    engine: Engine
    handlers: Mapping[str, Handler]

    def _members(self, run: Run, existing: list[str], skiplist: list[str]) -> tuple[Template, list[str]]:
        """The nested stack's template for the group's properties now, and the names blacklisted so far."""
        props = run.properties
        index_var = props.get("index_var") or "%index%"
        policies = props.get("removal_policies") or []
        skipped = sorted(skip_list(policies, existing, skiplist=skiplist))
        names = member_names(int(props.get("count", 1)), policies, existing, skiplist=skiplist)
        resources: dict[str, Any] = {}
        for name in names:
            member = member_definition(props["resource_def"], int(name), index_var)
            resources[name] = {"type": member.type, "properties": dict(member.properties)}
            if member.metadata:
                resources[name]["metadata"] = dict(member.metadata)
        source = {"heat_template_version": NESTED_VERSION, "resources": resources}
        return parse_template(source, files=run.stack.files, environment=run.stack.environment), skipped

    async def create(self, run: Run) -> None:
        child_id = await claim_physical_id(self.store, self.rng, run.resource)
        async with self.store.begin() as uow:
            if await uow.stacks.get(child_id) is not None:
                return
        template, skipped = self._members(run, [], [])
        parent = run.stack
        child = Stack(id=child_id, name=f"{parent.name}-{run.resource.name}-{run.resource.id[:12]}",
                      project_id=parent.project_id, user_id=parent.user_id, user_roles=parent.user_roles,
                      files=parent.files, environment=parent.environment, disable_rollback=True,
                      timeout_mins=parent.timeout_mins, parent_id=parent.id, parent_resource=run.resource.name,
                      template=template.as_dict())
        async with self.store.begin() as uow:
            await uow.stack_resources.update(run.resource.id, data={**run.resource.data, "skiplist": skipped})
            started = await actions.begin_create(uow, self.rng, child, template, self.rt.now())
        self.engine.start(started)

    def in_place(self, resource: StackResource, new: Mapping[str, Any]) -> bool:
        # heat always updates a nested stack, whose own members then decide what to replace
        return True

    async def update(self, run: Run, old: Mapping[str, Any]) -> None:
        async with self.store.begin() as uow:
            child = await uow.stacks.get(run.resource.physical_id or "")
            existing = [row.name for row in await uow.stack_resources.find(stack_id=child.id, current=True)
                        ] if child is not None else []
        if child is None or child.deleted_at is not None:
            raise ResourceFailed(reason=f"The nested stack of {run.resource.name} is gone")
        if child.state == stack_states.state(stack_states.UPDATE, stack_states.IN_PROGRESS):
            return  # begun before a restart: its own loop goes on (recovery started it)
        template, skipped = self._members(run, existing, list(run.resource.data.get("skiplist", [])))
        async with self.store.begin() as uow:
            await uow.stack_resources.update(run.resource.id, data={**run.resource.data, "skiplist": skipped})
            updating = await actions.begin_update(uow, self.rng, child, template, self.rt.now(),
                                                  files=run.stack.files, environment=run.stack.environment)
        if updating is None:
            raise ResourceFailed(reason=f"The nested stack of {run.resource.name} is busy")
        self.engine.start(updating)

    async def wait_ready(self, run: Run) -> None:
        await self._wait(run, lambda child: child.status == stack_states.COMPLETE)

    async def delete(self, run: Run) -> None:
        async with self.store.begin() as uow:
            child = await uow.stacks.get(run.resource.physical_id or "")
            if child is None or child.deleted_at is not None or child.state == stack_states.state(
                    stack_states.DELETE, stack_states.IN_PROGRESS):
                return
            deleting = await actions.begin_delete(uow, self.rng, child, self.rt.now())
        if deleting is not None:
            self.rt.notify(nested_key(child.id))  # the action it supersedes stops now
            self.engine.start(deleting)

    async def wait_gone(self, run: Run) -> None:
        await self._wait(run, lambda child: child.deleted_at is not None, gone_is_done=True)

    async def _wait(self, run: Run, done: Any, gone_is_done: bool = False) -> None:
        child_id = run.resource.physical_id or ""
        while True:
            async with self.store.begin() as uow:
                child = await uow.stacks.get(child_id)
            if child is None:
                if gone_is_done:
                    return
                raise ResourceFailed(reason=f"The nested stack of {run.resource.name} is gone")
            if done(child):
                return
            if child.status == stack_states.FAILED:
                raise ResourceFailed(reason=child.status_reason)
            await self.rt.wait(nested_key(child_id), POLL_SECONDS, "orchestration.engine.wait", guard=True)

    async def prepare_for_replace(self, old: Run, new: Run) -> None:
        return None

    async def restore(self, run: Run) -> None:
        return None

    async def attributes(self, ctx: RequestContext, resource: StackResource) -> dict[str, Any]:
        async with self.store.begin() as uow:
            members = await uow.stack_resources.find(stack_id=resource.physical_id or "", current=True)
        members.sort(key=lambda row: int(row.name) if row.name.isdigit() else row.name)
        shown: dict[str, Any] = {"refs": [row.physical_id for row in members],
                                 "refs_map": {row.name: row.physical_id for row in members},
                                 "removed_rsrc_list": list(resource.data.get("skiplist", []))}
        per_member: dict[str, dict[str, Any]] = {}
        for row in members:
            handler = self.handlers.get(row.type)
            try:
                per_member[row.name] = dict(await handler.attributes(ctx, row)) if handler and row.physical_id else {}
            except TetherError:
                per_member[row.name] = {}  # a member that is gone has no attributes
            shown[f"resource.{row.name}"] = per_member[row.name]
        names = sorted({name for attributes in per_member.values() for name in attributes})
        # heat: [group, attributes, first_address] maps members to values; [group, first_address] lists them
        shown["attributes"] = {name: {row.name: per_member[row.name].get(name) for row in members} for name in names}
        for name in names:
            shown.setdefault(name, [per_member[row.name].get(name) for row in members])
        return shown
