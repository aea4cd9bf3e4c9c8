"""A node's provision-state changes through ``PROVISION_STATES``, and the key its waiters wait on."""

from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass, field
from typing import Any

from tether.domain.baremetal import Node, NodeHistoryEvent
from tether.domain.baremetal_states import (
    CLEANING,
    CLEANWAIT,
    DELETING,
    DEPLOYING,
    DEPLOYWAIT,
    INSPECTING,
    PROVISION_STATES,
)
from tether.domain.errors import baremetal as be
from tether.domain.events import NodeStateChanged
from tether.domain.ids import new_uuid
from tether.domain.state_machine import IllegalTransition
from tether.runtime.runtime import Runtime
from tether.store import repos
from tether.store.database import Store

_AUTO = object()


class NodeChanged(Exception):
    """A conductor job found its node no longer in the state it was working on."""


def node_key(uuid: str) -> tuple[str, str]:
    """What waiters on a node's changes wait for."""
    return ("baremetal.node", uuid)


def refuse_illegal(node: Node, target: str, event: str) -> None:
    """InvalidStateRequested unless the state table lets ``event`` happen to the node now."""
    try:
        PROVISION_STATES.next_state(node.provision_state, event)
    except IllegalTransition:
        raise be.InvalidStateRequested(
            action=target, node=node.uuid, state=node.provision_state
        ) from None


# ironic's history event type for an error met in each state (its states.DEPLOYING, CLEANING, ...).
_EVENT_TYPES = {DEPLOYING: "deploying", DEPLOYWAIT: "deploying", CLEANING: "cleaning", CLEANWAIT: "cleaning",
                DELETING: "unprovision", INSPECTING: "introspection"}


@dataclass(eq=False)
class Transitions:
    store: Store
    rt: Runtime
    rng: random.Random = field(default_factory=random.Random)
    # The conductor's name, recorded with each error in the node's history.
    host: str | None = None

    async def apply(self, node: Node, event: str, *, target: Any = _AUTO, **changes: Any) -> Node:
        """Apply ``event`` to the node's provision state, only if nobody changed it meanwhile."""
        new_state = PROVISION_STATES.next_state(node.provision_state, event)
        if target is _AUTO:
            declared = PROVISION_STATES.states[new_state]
            target = None if declared.stable else declared.target
        now = self.rt.now()
        values = dict(
            provision_state=new_state, target_provision_state=target,
            provision_updated_at=now, updated_at=now, **changes,
        )
        async with self.store.begin() as uow:
            changed = await repos.nodes.update(
                uow, node.uuid, expect={"provision_state": node.provision_state}, **values
            )
            if changed:
                uow.emit(NodeStateChanged(node.uuid, event, node.provision_state, new_state))
                if changes.get("last_error"):
                    # ironic's node_history_record: each error a node meets is kept, not only the last
                    await repos.node_history.add(uow, NodeHistoryEvent(
                        uuid=new_uuid(self.rng), node_uuid=node.uuid, event=changes["last_error"],
                        event_type=_EVENT_TYPES.get(node.provision_state, "transition"), conductor=self.host,
                        created_at=now))
        if not changed:
            raise NodeChanged(node.uuid)
        self.rt.note(f"node {node.uuid}: {node.provision_state} -> {new_state} ({event})")
        self.rt.notify(node_key(node.uuid))
        return dataclasses.replace(node, **values)
