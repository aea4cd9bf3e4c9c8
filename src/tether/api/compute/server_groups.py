"""/os-server-groups: create, list, show, delete, as nova answers them.

A group has one policy: ``policies`` (a list of one) before 2.64, ``policy``
and ``rules`` (anti-affinity's ``max_server_per_host``) from it; the soft
policies exist from 2.15, and owners are shown from 2.13.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Query, Request, Response
from fastapi.responses import JSONResponse
from pydantic import BaseModel, StrictInt, StrictStr

from tether.api import paths
from tether.api.compute.bodies import Body, Name, fail, unexpected
from tether.api.compute.query import Text, lenient_bool, limit_of
from tether.api.deps import caller, cloud
from tether.api.versions import Microversion
from tether.domain import server_groups as sg
from tether.domain.server_groups import ServerGroup
from tether.services.context import RequestContext

router = paths.router("compute")


class Rules(Body):
    max_server_per_host: StrictInt | StrictStr | None = None


class ServerGroupCreate(Body):
    name: Name
    policies: list[StrictStr] | None = None
    policy: StrictStr | None = None
    rules: Rules | None = None


class ServerGroupCreateRequest(Body):
    server_group: ServerGroupCreate


class ListQuery(BaseModel):
    all_projects: Text = None
    limit: Text = None
    offset: Text = None


def _policies(version: Microversion) -> tuple[str, ...]:
    return sg.POLICIES if version.at_least(sg.SOFT_POLICIES_SINCE) else (sg.ANTI_AFFINITY, sg.AFFINITY)


def group_body(group: ServerGroup, members: list[str], version: Microversion) -> dict[str, Any]:
    body: dict[str, Any] = {"id": group.id, "name": group.name}
    if version.at_least("2.64"):
        body["policy"] = group.policy
        body["rules"] = dict(group.rules)
    else:
        body["policies"] = [group.policy]
        body["metadata"] = {}
    body["members"] = members
    if version.at_least("2.13"):
        body["project_id"] = group.project_id
        body["user_id"] = group.user_id
    return body


def _policy_and_rules(asked: ServerGroupCreate, version: Microversion) -> tuple[str, dict[str, int]]:
    allowed = _policies(version)
    if version.at_least("2.64"):
        if asked.policies is not None:
            raise unexpected("server_group", "policies")
        if asked.policy is None:
            raise fail("Invalid input for field/attribute server_group. 'policy' is a required property")
        if asked.policy not in allowed:
            raise fail(f"Invalid input for field/attribute policy. Value: {asked.policy}. '{asked.policy}' is not "
                       f"one of {list(allowed)}")
        rules: dict[str, int] = {}
        if asked.rules is not None and asked.rules.max_server_per_host is not None:
            raw = asked.rules.max_server_per_host
            if (isinstance(raw, str) and not raw.isdigit()) or int(raw) < 1:
                raise fail(f"Invalid input for field/attribute max_server_per_host. Value: {raw}. {raw!r} is less "
                           f"than the minimum of 1")
            rules["max_server_per_host"] = int(raw)
        return asked.policy, rules
    for name in ("policy", "rules"):
        if name in asked.given():
            raise unexpected("server_group", name)
    if asked.policies is None:
        raise fail("Invalid input for field/attribute server_group. 'policies' is a required property")
    if len(asked.policies) != 1 or asked.policies[0] not in allowed:
        raise fail(f"Invalid input for field/attribute policies. Value: {asked.policies}. {asked.policies!r} is not "
                   f"valid under any of the given schemas")
    return asked.policies[0], {}


@router.post("/os-server-groups")
async def create_server_group(request: Request, parsed: ServerGroupCreateRequest,
                              ctx: RequestContext = Depends(caller)) -> JSONResponse:
    version: Microversion = request.state.microversion
    policy, rules = _policy_and_rules(parsed.server_group, version)
    group = await cloud(request).compute.create_server_group(ctx, parsed.server_group.name, policy, rules)
    return JSONResponse({"server_group": group_body(group, [], version)})


@router.get("/os-server-groups")
async def list_server_groups(request: Request, query: Annotated[ListQuery, Query()],
                             ctx: RequestContext = Depends(caller)) -> JSONResponse:
    version: Microversion = request.state.microversion
    groups = await cloud(request).compute.server_groups(
        ctx, all_projects=query.all_projects is not None and lenient_bool(query.all_projects, default=True))
    offset = int(query.offset) if query.offset and query.offset.isdigit() else 0
    if query.offset is not None and not query.offset.isdigit():
        raise fail(f"Invalid input for query parameters offset. Value: {query.offset}. '{query.offset}' does not "
                   f"match '^[0-9]*$'")
    chosen = groups[offset:offset + limit_of(query.limit)]
    return JSONResponse({"server_groups": [group_body(group, members, version) for group, members in chosen]})


@router.get("/os-server-groups/{group_id}")
async def show_server_group(group_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> JSONResponse:
    version: Microversion = request.state.microversion
    group, members = await cloud(request).compute.server_group(ctx, group_id)
    return JSONResponse({"server_group": group_body(group, members, version)})


@router.delete("/os-server-groups/{group_id}", status_code=204)
async def delete_server_group(group_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> Response:
    await cloud(request).compute.delete_server_group(ctx, group_id)
    return Response(status_code=204)
