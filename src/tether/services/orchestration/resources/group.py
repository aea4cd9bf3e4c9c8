"""OS::Heat::ResourceGroup: N members of one definition, in a nested stack of their own.

As heat does it: the members ("0", "1", ...) are the resources of a nested stack, so a
member that failed is replaced by the nested stack's own update, and a change of ``count``
is an update in place that adds or removes members (``removal_policies`` name the ones to
remove, and a removed name is never used again).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tether.domain.errors import TetherError
from tether.domain.orchestration.resource_group import member_definition, member_names, skip_list
from tether.domain.orchestration.stacks import StackResource
from tether.domain.orchestration.template import Template, parse_template
from tether.services.context import RequestContext
from tether.services.orchestration.resources.base import Handler, Run
from tether.services.orchestration.resources.nested import NestedStacks

NESTED_VERSION = "2015-04-30"


@dataclass(eq=False)
class Group:
    nested: NestedStacks
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
        template, skipped = self._members(run, [], [])
        await self.nested.create(run, template, {}, {"skiplist": skipped})

    def in_place(self, resource: StackResource, new: Mapping[str, Any]) -> bool:
        # heat always updates a nested stack, whose own members then decide what to replace
        return True

    async def update(self, run: Run, old: Mapping[str, Any]) -> None:
        existing = [row.name for row in await self.nested.members(run.resource)]
        template, skipped = self._members(run, existing, list(run.resource.data.get("skiplist", [])))
        await self.nested.update(run, template, {}, {"skiplist": skipped})

    async def wait_ready(self, run: Run) -> None:
        await self.nested.wait_ready(run)

    async def delete(self, run: Run) -> None:
        await self.nested.delete(run)

    async def wait_gone(self, run: Run) -> None:
        await self.nested.wait_gone(run)

    async def prepare_for_replace(self, old: Run, new: Run) -> None:
        return None

    async def restore(self, run: Run) -> None:
        return None

    async def attributes(self, ctx: RequestContext, resource: StackResource) -> dict[str, Any]:
        members = await self.nested.members(resource)
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
