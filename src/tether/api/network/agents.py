"""GET /v2.0/agents and /v2.0/agents/{id} (neutron's agent extension, read-only here)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from fastapi import Depends, Request

from tether.api import openapi, paths
from tether.api.deps import caller, cloud
from tether.api.network.errors import HTTPBadRequest, neutron_errors
from tether.booleans import bool_from_string
from tether.domain.errors.network import AgentNotFound
from tether.services.context import RequestContext
from tether.services.network.agent_records import AgentRecord

router = paths.router("network")

FILTERS = ("id", "agent_type", "binary", "topic", "host", "admin_state_up", "alive")


def _time(moment: float) -> str:
    """neutron's agent timestamps: a naive UTC datetime with a space."""
    return datetime.fromtimestamp(moment, UTC).strftime("%Y-%m-%d %H:%M:%S")


def agent_view(agent: AgentRecord) -> dict[str, Any]:
    return {
        "id": agent.id, "agent_type": agent.agent_type, "binary": agent.binary, "topic": agent.topic,
        "host": agent.host, "admin_state_up": agent.admin_state_up, "alive": agent.alive,
        "availability_zone": None, "configurations": dict(agent.configurations),
        "created_at": _time(agent.started_at), "started_at": _time(agent.started_at),
        "heartbeat_timestamp": _time(agent.heartbeat_timestamp), "description": None, "resources_synced": None,
    }


def _matches(view: dict[str, Any], name: str, values: list[str]) -> bool:
    if name in ("admin_state_up", "alive"):
        try:
            return any(view[name] == bool_from_string(value, strict=True) for value in values)
        except ValueError:
            raise HTTPBadRequest(f"Invalid input for {name}. Reason: '{values[0]}' cannot be converted to "
                                 "boolean.") from None
    return view[name] in values


@router.get("/agents", openapi_extra=openapi.extra(params=openapi.query(
    {name: openapi.STRING for name in (*FILTERS, "fields")})))
async def list_agents(request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    with neutron_errors():
        grouped: dict[str, list[str]] = {}
        for name, value in request.query_params.multi_items():
            grouped.setdefault(name, []).append(value)
        invalid = [name for name in grouped if name not in (*FILTERS, "fields")]
        if invalid:
            raise HTTPBadRequest(f"{invalid} is invalid attribute for filtering")
        # neutron's get_agent policy is admin only: others see none
        views = [agent_view(agent) for agent in await cloud(request).network.list_agents()] if ctx.is_admin else []
        kept = [view for view in views
                if all(_matches(view, name, values) for name, values in grouped.items() if name != "fields")]
    fields = [value for value in grouped.get("fields", []) if value]
    return {"agents": [{k: v for k, v in view.items() if not fields or k in fields} for view in kept]}


@router.get("/agents/{agent_id}")
async def show_agent(agent_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    with neutron_errors():
        if not ctx.is_admin:
            raise AgentNotFound(id=agent_id)
        agent = await cloud(request).network.get_agent(agent_id)
    return {"agent": agent_view(agent)}
