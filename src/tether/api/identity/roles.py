"""Keystone's roles, their inference rules, grants, and GET /v3/role_assignments."""

from __future__ import annotations

from typing import Any

from fastapi import Depends, Request, Response

from tether.api import paths
from tether.api.deps import caller, cloud
from tether.api.identity.common import (
    DESCRIPTION,
    NAME,
    NO_BODY,
    NULLABLE_ID,
    body_doc,
    flag,
    links,
    listing,
    require_admin,
    require_reader,
    resource_body,
    schema,
    v3,
)
from tether.domain.errors import identity as ie
from tether.domain.identity import SYSTEM_ALL, InheritedRoleAssignment, Role, RoleAssignment
from tether.services.context import RequestContext
from tether.services.identity.grants import SYSTEM, Actor, Target

router = paths.router("identity")

ROLE_CREATE = schema({"name": NAME, "description": DESCRIPTION, "domain_id": NULLABLE_ID}, ["name"], open_=False)
ROLE_UPDATE = schema({"name": NAME, "description": DESCRIPTION}, open_=False)


def role_view(request: Request, role: Role) -> dict[str, Any]:
    return {"id": role.id, "name": role.name, "domain_id": role.domain_id, "description": role.description or None,
            "options": {}, "links": links(request, "roles", role.id)}


def _brief(request: Request, role: Role) -> dict[str, Any]:
    return {"id": role.id, "name": role.name, "links": links(request, "roles", role.id)}


# -- roles --------------------------------------------------------------------------------------------


@router.post("/v3/roles", status_code=201,
    openapi_extra=body_doc("role", ROLE_CREATE))
async def create_role(request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    require_admin(ctx, "create_role")
    body = await resource_body(request, "role", ROLE_CREATE)
    role = await cloud(request).identity.create_role(name=body["name"], description=body.get("description") or "",
                                                     domain_id=body.get("domain_id"))
    return {"role": role_view(request, role)}


@router.get("/v3/roles")
async def list_roles(request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    require_reader(ctx, "list_roles", domain_id=ctx.domain_id)
    roles = await cloud(request).identity.list_roles(name=request.query_params.get("name"))
    # keystone lists a domain's own roles when asked, and the global ones otherwise
    domain_id = request.query_params.get("domain_id") or None
    return listing(request, "roles", [role_view(request, r) for r in roles if r.domain_id == domain_id])


@router.get("/v3/roles/{role_id}")
async def get_role(role_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    require_reader(ctx, "get_role", domain_id=ctx.domain_id)
    return {"role": role_view(request, await cloud(request).identity.get_role(role_id))}


@router.patch("/v3/roles/{role_id}",
    openapi_extra=body_doc("role", ROLE_UPDATE))
async def update_role(role_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    require_admin(ctx, "update_role")
    body = await resource_body(request, "role", ROLE_UPDATE)
    role = await cloud(request).identity.accounts.update_role(role_id, name=body.get("name"),
                                                              description=body.get("description"))
    return {"role": role_view(request, role)}


@router.delete("/v3/roles/{role_id}", status_code=204)
async def delete_role(role_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> Response:
    require_admin(ctx, "delete_role")
    await cloud(request).identity.accounts.delete_role(role_id)
    return Response(status_code=204)


# -- implied roles ------------------------------------------------------------------------------------


def _rule(request: Request, prior: Role, implied: Role) -> dict[str, Any]:
    return {"role_inference": {"prior_role": _brief(request, prior), "implies": _brief(request, implied)},
            "links": {"self": f"{v3(request)}/roles/{prior.id}/implies/{implied.id}"}}


@router.put("/v3/roles/{prior_role_id}/implies/{implied_role_id}", status_code=201,
    openapi_extra=NO_BODY)
async def create_implied_role(prior_role_id: str, implied_role_id: str, request: Request,
                              ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    require_admin(ctx, "create_implied_role")
    prior, implied = await cloud(request).identity.accounts.imply_role(prior_role_id, implied_role_id)
    return _rule(request, prior, implied)


@router.get("/v3/roles/{prior_role_id}/implies/{implied_role_id}")
async def get_implied_role(prior_role_id: str, implied_role_id: str, request: Request,
                           ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    require_reader(ctx, "get_implied_role")
    prior, implied = await cloud(request).identity.accounts.implied_rule(prior_role_id, implied_role_id)
    return _rule(request, prior, implied)


@router.head("/v3/roles/{prior_role_id}/implies/{implied_role_id}", status_code=204)
async def check_implied_role(prior_role_id: str, implied_role_id: str, request: Request,
                             ctx: RequestContext = Depends(caller)) -> Response:
    require_reader(ctx, "check_implied_role")
    await cloud(request).identity.accounts.implied_rule(prior_role_id, implied_role_id)
    return Response(status_code=204)


@router.delete("/v3/roles/{prior_role_id}/implies/{implied_role_id}", status_code=204)
async def delete_implied_role(prior_role_id: str, implied_role_id: str, request: Request,
                              ctx: RequestContext = Depends(caller)) -> Response:
    require_admin(ctx, "delete_implied_role")
    await cloud(request).identity.accounts.unimply_role(prior_role_id, implied_role_id)
    return Response(status_code=204)


@router.get("/v3/roles/{prior_role_id}/implies")
async def list_implied_roles(prior_role_id: str, request: Request,
                             ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    require_reader(ctx, "list_implied_roles")
    identity = cloud(request).identity
    prior = await identity.get_role(prior_role_id)
    implied = [await identity.get_role(role_id) for role_id in prior.implies]
    return {"role_inference": {"prior_role": _brief(request, prior),
                               "implies": [_brief(request, role) for role in implied]},
            "links": {"self": f"{v3(request)}/roles/{prior.id}/implies"}}


@router.get("/v3/role_inferences")
async def list_role_inferences(request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    require_reader(ctx, "list_role_inference_rules")
    roles = await cloud(request).identity.list_roles()
    by_id = {role.id: role for role in roles}
    rules = [{"prior_role": _brief(request, role),
              "implies": [_brief(request, by_id[i]) for i in role.implies if i in by_id]}
             for role in roles if role.implies]
    return {"role_inferences": rules, "links": {"self": f"{v3(request)}/role_inferences"}}


# -- grants -------------------------------------------------------------------------------------------
# /v3/{projects|domains}/{target}/{users|groups}/{actor}/roles/{role} and /v3/system/{users|groups}/...

_TARGETS = {"projects": "project", "domains": "domain"}
_ACTORS = {"users": "user", "groups": "group"}


def grant_parts(target_kind: str, target_id: str, actor_kind: str, actor_id: str) -> tuple[Actor, Target]:
    if target_kind not in _TARGETS or actor_kind not in _ACTORS:
        raise ie.NotFound(target="resource", id=f"{target_kind}/{actor_kind}")
    return Actor(_ACTORS[actor_kind], actor_id), Target(_TARGETS[target_kind], target_id)


@router.put("/v3/{target_kind}/{target_id}/{actor_kind}/{actor_id}/roles/{role_id}", status_code=204,
    openapi_extra=NO_BODY)
async def grant_role(target_kind: str, target_id: str, actor_kind: str, actor_id: str, role_id: str,
                     request: Request, ctx: RequestContext = Depends(caller)) -> Response:
    require_admin(ctx, "create_grant")
    actor, target = grant_parts(target_kind, target_id, actor_kind, actor_id)
    await cloud(request).identity.assignments.grant(actor, target, role_id)
    return Response(status_code=204)


@router.head("/v3/{target_kind}/{target_id}/{actor_kind}/{actor_id}/roles/{role_id}", status_code=204)
@router.get("/v3/{target_kind}/{target_id}/{actor_kind}/{actor_id}/roles/{role_id}", status_code=204,
            include_in_schema=False)
async def check_role(target_kind: str, target_id: str, actor_kind: str, actor_id: str, role_id: str,
                     request: Request, ctx: RequestContext = Depends(caller)) -> Response:
    require_reader(ctx, "check_grant", domain_id=target_id if target_kind == "domains" else None)
    actor, target = grant_parts(target_kind, target_id, actor_kind, actor_id)
    await cloud(request).identity.assignments.check(actor, target, role_id)
    return Response(status_code=204)


@router.delete("/v3/{target_kind}/{target_id}/{actor_kind}/{actor_id}/roles/{role_id}", status_code=204)
async def revoke_role(target_kind: str, target_id: str, actor_kind: str, actor_id: str, role_id: str,
                      request: Request, ctx: RequestContext = Depends(caller)) -> Response:
    require_admin(ctx, "revoke_grant")
    actor, target = grant_parts(target_kind, target_id, actor_kind, actor_id)
    await cloud(request).identity.assignments.revoke(actor, target, role_id)
    return Response(status_code=204)


@router.get("/v3/{target_kind}/{target_id}/{actor_kind}/{actor_id}/roles")
async def list_grants(target_kind: str, target_id: str, actor_kind: str, actor_id: str, request: Request,
                      ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    require_reader(ctx, "list_grants", domain_id=target_id if target_kind == "domains" else None)
    actor, target = grant_parts(target_kind, target_id, actor_kind, actor_id)
    return await roles_listing(request, actor, target)


async def roles_listing(request: Request, actor: Actor, target: Target, *, inherited: bool = False) -> dict[str, Any]:
    identity = cloud(request).identity
    grants = await identity.assignments.list(actor=actor, target=target, inherited=inherited)
    roles = {role.id: role for role in await identity.list_roles()}
    return listing(request, "roles", [role_view(request, roles[g.role_id]) for g in grants if g.role_id in roles])


@router.put("/v3/system/{actor_kind}/{actor_id}/roles/{role_id}", status_code=204,
    openapi_extra=NO_BODY)
async def grant_system_role(actor_kind: str, actor_id: str, role_id: str, request: Request,
                            ctx: RequestContext = Depends(caller)) -> Response:
    require_admin(ctx, "create_system_grant_for_user")
    actor, _ = grant_parts("projects", "", actor_kind, actor_id)
    await cloud(request).identity.assignments.grant(actor, SYSTEM, role_id)
    return Response(status_code=204)


@router.head("/v3/system/{actor_kind}/{actor_id}/roles/{role_id}", status_code=204)
@router.get("/v3/system/{actor_kind}/{actor_id}/roles/{role_id}", status_code=204, include_in_schema=False)
async def check_system_role(actor_kind: str, actor_id: str, role_id: str, request: Request,
                            ctx: RequestContext = Depends(caller)) -> Response:
    require_reader(ctx, "check_system_grant_for_user")
    actor, _ = grant_parts("projects", "", actor_kind, actor_id)
    await cloud(request).identity.assignments.check(actor, SYSTEM, role_id)
    return Response(status_code=204)


@router.delete("/v3/system/{actor_kind}/{actor_id}/roles/{role_id}", status_code=204)
async def revoke_system_role(actor_kind: str, actor_id: str, role_id: str, request: Request,
                             ctx: RequestContext = Depends(caller)) -> Response:
    require_admin(ctx, "revoke_system_grant_for_user")
    actor, _ = grant_parts("projects", "", actor_kind, actor_id)
    await cloud(request).identity.assignments.revoke(actor, SYSTEM, role_id)
    return Response(status_code=204)


@router.get("/v3/system/{actor_kind}/{actor_id}/roles")
async def list_system_roles(actor_kind: str, actor_id: str, request: Request,
                            ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    require_reader(ctx, "list_system_grants_for_user")
    actor, _ = grant_parts("projects", "", actor_kind, actor_id)
    return await roles_listing(request, actor, SYSTEM)


# -- GET /v3/role_assignments -------------------------------------------------------------------------


@router.get("/v3/role_assignments")
async def list_role_assignments(request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    query = request.query_params
    user_id, group_id = query.get("user.id"), query.get("group.id")
    own = user_id is not None and user_id == ctx.user_id
    require_reader(ctx, "list_role_assignments", domain_id=query.get("scope.domain.id"), own=own)
    effective = "effective" in query and flag(request, "effective") is not False
    if effective and group_id:
        raise ie.ValidationError(reason="Combining effective and group filter will always result in an empty "
                                        "list.")
    targets = [Target(kind, query[f"scope.{kind}.id"]) for kind in ("project", "domain")
               if query.get(f"scope.{kind}.id")]
    if query.get("scope.system"):
        targets.append(Target("system", SYSTEM_ALL))
    if len(targets) > 1:
        raise ie.ValidationError(reason="Specify a domain or project, not both")
    actor = Actor("user", user_id) if user_id else Actor("group", group_id) if group_id else None
    identity = cloud(request).identity
    inherited_to = query.get("scope.OS-INHERIT:inherited_to")
    if inherited_to not in (None, "projects"):
        raise ie.ValidationError(reason="Invalid input for field 'scope.OS-INHERIT:inherited_to': only 'projects' "
                                        "is allowed")
    grants = await identity.assignments.list(actor=actor, target=targets[0] if targets else None,
                                             role_id=query.get("role.id"), effective=effective,
                                             inherited=True if inherited_to else None)
    names = "include_names" in query and flag(request, "include_names") is not False
    return listing(request, "role_assignments",
                   [await _assignment_view(request, grant, names) for grant in grants])


async def _assignment_view(request: Request, grant: RoleAssignment, names: bool) -> dict[str, Any]:
    identity = cloud(request).identity
    actor_kind, actor_id = grant.actor
    target_kind, target_id = grant.target
    view: dict[str, Any] = {"role": {"id": grant.role_id}, actor_kind: {"id": actor_id}}
    view["scope"] = {"system": {"all": True}} if target_kind == "system" else {target_kind: {"id": target_id}}
    if target_kind == "system":
        path = f"system/{actor_kind}s/{actor_id}/roles/{grant.role_id}"
    elif isinstance(grant, InheritedRoleAssignment):
        view["scope"]["OS-INHERIT:inherited_to"] = "projects"
        path = (f"OS-INHERIT/{target_kind}s/{target_id}/{actor_kind}s/{actor_id}/roles/{grant.role_id}"
                "/inherited_to_projects")
    else:
        path = f"{target_kind}s/{target_id}/{actor_kind}s/{actor_id}/roles/{grant.role_id}"
    view["links"] = {"assignment": f"{v3(request)}/{path}"}
    if names:
        try:
            view["role"]["name"] = (await identity.get_role(grant.role_id)).name
            if actor_kind == "user":
                user = await identity.get_user(actor_id)
                view["user"].update(name=user.name, domain=await _domain_ref(request, user.domain_id))
            else:
                group = await identity.groups.get_group(actor_id)
                view["group"].update(name=group.name, domain=await _domain_ref(request, group.domain_id))
            if target_kind == "project":
                project = await identity.get_project(target_id)
                view["scope"]["project"].update(name=project.name,
                                                domain=await _domain_ref(request, project.domain_id))
            elif target_kind == "domain":
                view["scope"]["domain"]["name"] = (await identity.get_domain(target_id)).name
        except ie.NotFound:
            pass  # deleted meanwhile: the ids are still right
    return view


async def _domain_ref(request: Request, domain_id: str) -> dict[str, str]:
    domain = await cloud(request).identity.get_domain(domain_id)
    return {"id": domain.id, "name": domain.name}
