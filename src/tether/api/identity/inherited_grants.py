"""Keystone's OS-INHERIT: grants on a domain or a project that every project below it inherits
(/v3/OS-INHERIT/{domains|projects}/{id}/{users|groups}/{id}/roles/{role_id}/inherited_to_projects)."""

from __future__ import annotations

from typing import Any

from fastapi import Depends, Request, Response

from tether.api import paths
from tether.api.deps import caller, cloud
from tether.api.identity.common import NO_BODY, require_admin, require_reader
from tether.api.identity.roles import grant_parts, roles_listing
from tether.services.context import RequestContext

router = paths.router("identity")

_GRANT = "/v3/OS-INHERIT/{target_kind}/{target_id}/{actor_kind}/{actor_id}/roles/{role_id}/inherited_to_projects"


@router.put(_GRANT, status_code=204, openapi_extra=NO_BODY)
async def grant_inherited_role(target_kind: str, target_id: str, actor_kind: str, actor_id: str, role_id: str,
                               request: Request, ctx: RequestContext = Depends(caller)) -> Response:
    require_admin(ctx, "create_grant")
    actor, target = grant_parts(target_kind, target_id, actor_kind, actor_id)
    await cloud(request).identity.assignments.grant(actor, target, role_id, inherited=True)
    return Response(status_code=204)


@router.head(_GRANT, status_code=204)
@router.get(_GRANT, status_code=204, include_in_schema=False)
async def check_inherited_role(target_kind: str, target_id: str, actor_kind: str, actor_id: str, role_id: str,
                               request: Request, ctx: RequestContext = Depends(caller)) -> Response:
    require_reader(ctx, "check_grant", domain_id=target_id if target_kind == "domains" else None)
    actor, target = grant_parts(target_kind, target_id, actor_kind, actor_id)
    await cloud(request).identity.assignments.check(actor, target, role_id, inherited=True)
    return Response(status_code=204)


@router.delete(_GRANT, status_code=204)
async def revoke_inherited_role(target_kind: str, target_id: str, actor_kind: str, actor_id: str, role_id: str,
                                request: Request, ctx: RequestContext = Depends(caller)) -> Response:
    require_admin(ctx, "revoke_grant")
    actor, target = grant_parts(target_kind, target_id, actor_kind, actor_id)
    await cloud(request).identity.assignments.revoke(actor, target, role_id, inherited=True)
    return Response(status_code=204)


@router.get("/v3/OS-INHERIT/domains/{domain_id}/{actor_kind}/{actor_id}/roles/inherited_to_projects")
async def list_inherited_roles(domain_id: str, actor_kind: str, actor_id: str, request: Request,
                               ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    """Keystone lists inherited grants on domains only (a project's are read through role_assignments)."""
    require_reader(ctx, "list_grants", domain_id=domain_id)
    actor, target = grant_parts("domains", domain_id, actor_kind, actor_id)
    return await roles_listing(request, actor, target, inherited=True)
