"""Stacks, their resources and events, as heat's engine keeps them.

A stack's resources are rows of their own, each with its state, the id of the physical
resource it made (a server, a port, ...) and ``data``: what the resource must remember to
clean up after itself. A server resource's internal ports live there (design rule 2, seed
001): the ports the stack created for it, which it deletes, apart from the ports the user
brought, which it only gives back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tether.domain.orchestration.stack_states import INIT_COMPLETE, split


@dataclass
class Stack:
    id: str
    name: str
    project_id: str
    user_id: str
    # The roles the stack's creator held: its actions run as that user, as heat's stored context does.
    user_roles: list[str] = field(default_factory=list)
    state: str = INIT_COMPLETE  # ACTION_STATUS, through the state table
    status_reason: str = ""
    template: dict[str, Any] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)
    environment: dict[str, Any] = field(default_factory=dict)
    parameters: dict[str, Any] = field(default_factory=dict)  # as the user gave them
    # The template and parameters the stack had before the update in progress: what a rollback returns to.
    previous: dict[str, Any] | None = None
    disable_rollback: bool = True
    timeout_mins: int | None = None
    tags: list[str] = field(default_factory=list)
    # A nested stack (a ResourceGroup's members, a template resource) names its parent resource.
    parent_id: str | None = None
    parent_resource: str | None = None
    deadline: float | None = None  # when the action in progress must have ended (rule 3)
    # Which run of the engine drives the action in progress: a new action (a delete that supersedes
    # a create) takes a new one, and the old run stops at its next step.
    traversal: str = ""
    created_at: float = 0.0
    updated_at: float | None = None
    deleted_at: float | None = None

    @property
    def action(self) -> str:
        return split(self.state)[0]

    @property
    def status(self) -> str:
        return split(self.state)[1]


@dataclass
class StackResource:
    id: str
    stack_id: str
    name: str
    type: str
    state: str = INIT_COMPLETE
    status_reason: str = ""
    physical_id: str | None = None
    # The properties as last applied (functions resolved): what an update is compared with.
    properties: dict[str, Any] | None = None
    data: dict[str, Any] = field(default_factory=dict)
    # During an update that replaces it, the old resource stays (current False) until the new one is up.
    current: bool = True
    replaced_by: str | None = None
    # The stack action that last dealt with it: an update goes through every resource once.
    traversal: str = ""
    created_at: float = 0.0
    updated_at: float | None = None

    @property
    def action(self) -> str:
        return split(self.state)[0]

    @property
    def status(self) -> str:
        return split(self.state)[1]



@dataclass
class StackPort:
    """A port a stack created: a server resource's internal port, or an OS::Neutron::Port's.

    Written before the port is made (with the id it will have), deleted after the port is gone:
    the owner's list that the orphan-port invariant checks every orchestration port against
    (rule 2 and rule 5, seed 001).
    """

    port_id: str
    stack_id: str
    resource_id: str
    resource_name: str
    internal: bool = True  # made for a server's networks entry (False: an OS::Neutron::Port resource)
    network: str = ""
    fixed_ip: str | None = None
    subnet: str | None = None
    position: int = 0


@dataclass
class StackEvent:
    id: str
    stack_id: str
    resource_name: str  # the stack's own name for the stack's events, as heat does
    physical_resource_id: str
    resource_action: str
    resource_status: str
    resource_status_reason: str
    resource_type: str
    created_at: float
    sequence: int | None = None  # the order events happened in (assigned by the store)
