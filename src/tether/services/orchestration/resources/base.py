"""What every resource type does, and what it is given to do it with.

A handler's ``create`` and ``delete`` run under the resource's lock and make or undo the
physical resource (idempotently: they are run again after a crash, from what the resource's
row records); ``wait_ready`` and ``wait_gone`` wait outside it, so that a delete can take
over a resource whose create is still waiting for its server.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from tether.domain.errors import TetherError
from tether.domain.ids import new_uuid
from tether.domain.orchestration.plan import USABLE
from tether.domain.orchestration.stacks import Stack, StackResource
from tether.services.context import RequestContext
from tether.store.database import Store


class ResourceFailed(TetherError):
    """A resource's action failed; ``message`` is the reason heat shows for it."""

    service = "orchestration"
    status = 400
    template = "{reason}"


@dataclass
class Run:
    """One action on one resource: who acts, on what, with which properties."""

    ctx: RequestContext
    stack: Stack
    resource: StackResource
    properties: Mapping[str, Any] = field(default_factory=dict)

    @property
    def physical_name(self) -> str:
        """The name heat gives a physical resource whose template names none: STACK-RESOURCE-SUFFIX."""
        return f"{self.stack.name}-{self.resource.name}-{self.resource.id[:12]}"


class Handler(Protocol):
    async def create(self, run: Run) -> None: ...

    async def prepare_for_replace(self, old: Run, new: Run) -> None:
        """Before ``new`` is made to replace ``old`` (under ``new``'s lock)."""

    async def restore(self, run: Run) -> None:
        """A rollback made this resource current again: take back what its replacement had."""

    def in_place(self, resource: StackResource, new: Mapping[str, Any]) -> bool:
        """Whether an update moves this resource to ``new`` properties in place (else it is replaced
        when they changed, or kept)."""

    async def update(self, run: Run, old: Mapping[str, Any]) -> None:
        """Move the physical resource from ``old`` to ``run.properties`` in place."""

    async def wait_ready(self, run: Run) -> None: ...

    async def delete(self, run: Run) -> None: ...

    async def wait_gone(self, run: Run) -> None: ...

    async def attributes(self, ctx: RequestContext, resource: StackResource) -> dict[str, Any]:
        """Every attribute ``get_attr`` and outputs may read (``show`` among them)."""


async def claim_physical_id(store: Store, rng: random.Random, resource: StackResource) -> str:
    """The id the physical resource will have, recorded before it is made (rule 5): a crash
    between the two leaves an id that names nothing, never a resource nobody knows of."""
    if resource.physical_id:
        return resource.physical_id
    physical_id = new_uuid(rng)
    async with store.begin() as uow:
        await uow.stack_resources.update(resource.id, physical_id=physical_id)
    resource.physical_id = physical_id
    return physical_id


def public(entity: Any) -> dict[str, Any]:
    """An entity as the ``show`` attribute gives it: its fields, as plain JSON."""
    return {name: value for name, value in dataclasses.asdict(entity).items() if name != "created_for"}


def changed(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
    """The properties whose value differs, with their new value."""
    return {key: new.get(key) for key in set(old) | set(new) if old.get(key) != new.get(key)}


def changes_in_place(resource: StackResource, new: Mapping[str, Any], updatable: frozenset[str]) -> bool:
    """Whether a usable resource can take ``new`` in place: something changed, and only what can."""
    difference = changed(resource.properties or {}, new)
    return bool(difference) and resource.state in USABLE and set(difference) <= updatable
