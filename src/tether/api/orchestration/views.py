"""Stacks, resources and events as heat's API shows them (heat/api/openstack/v1/*.format_*)."""

from __future__ import annotations

from typing import Any

from tether.api.compute.views import isotime
from tether.domain.orchestration.stacks import Stack, StackEvent, StackResource


def stack_href(base: str, stack: Stack) -> str:
    return f"{base}/stacks/{stack.name}/{stack.id}"


def stack_summary(base: str, stack: Stack) -> dict[str, Any]:
    """A stack in a list: heat's ``format_stack`` without parameters and outputs."""
    return {
        "id": stack.id, "stack_name": stack.name, "description": stack.template.get("description", ""),
        "creation_time": isotime(stack.created_at), "updated_time": isotime(stack.updated_at),
        "deletion_time": isotime(stack.deleted_at), "stack_status": stack.state,
        "stack_status_reason": stack.status_reason, "stack_owner": None, "stack_user_project_id": stack.project_id,
        "parent": stack.parent_id, "tags": stack.tags or None, "project": stack.project_id,
        "links": [{"href": stack_href(base, stack), "rel": "self"}],
    }


def stack_detail(base: str, stack: Stack, parameters: dict[str, Any],
                 outputs: list[dict[str, Any]] | None) -> dict[str, Any]:
    shown = stack_summary(base, stack)
    shown.update({
        "disable_rollback": stack.disable_rollback, "timeout_mins": stack.timeout_mins, "capabilities": [],
        "notification_topics": [], "parameters": parameters,
        "template_description": stack.template.get("description", ""),
    })
    if outputs is not None:
        shown["outputs"] = outputs
    return shown


def resource_view(base: str, stack: Stack, resource: StackResource, required_by: list[str],
                  attributes: dict[str, Any] | None = None) -> dict[str, Any]:
    shown: dict[str, Any] = {
        "resource_name": resource.name, "logical_resource_id": resource.name,
        "physical_resource_id": resource.physical_id or "", "resource_type": resource.type,
        "resource_status": resource.state, "resource_status_reason": resource.status_reason,
        "creation_time": isotime(resource.created_at), "updated_time": isotime(resource.updated_at or
                                                                               resource.created_at),
        "required_by": required_by, "description": "", "parent_resource": stack.parent_resource,
        "links": [{"href": f"{stack_href(base, stack)}/resources/{resource.name}", "rel": "self"},
                  {"href": stack_href(base, stack), "rel": "stack"}],
    }
    if attributes is not None:
        shown["attributes"] = attributes
    return shown


def event_view(base: str, stack: Stack, event: StackEvent) -> dict[str, Any]:
    # heat joins the action and the status in resource_status, as it did before it split them
    links = [{"href": f"{stack_href(base, stack)}/resources/{event.resource_name}/events/{event.id}", "rel": "self"},
             {"href": f"{stack_href(base, stack)}/resources/{event.resource_name}", "rel": "resource"},
             {"href": stack_href(base, stack), "rel": "stack"}]
    return {
        "id": event.id, "event_time": isotime(event.created_at), "resource_name": event.resource_name,
        "logical_resource_id": event.resource_name, "physical_resource_id": event.physical_resource_id,
        "resource_status": f"{event.resource_action}_{event.resource_status}",
        "resource_status_reason": event.resource_status_reason, "links": links,
    }
