"""Keystone's /v3/policies: admins write, system readers read."""

from __future__ import annotations

from typing import Any

from fastapi import Depends, Request, Response

from tether.api import paths
from tether.api.deps import caller, cloud
from tether.api.identity.common import (
    STRING,
    body_doc,
    listing,
    require_admin,
    require_reader,
    resource_body,
    schema,
    v3,
)
from tether.domain.errors import identity as ie
from tether.domain.identity import Policy
from tether.services.context import RequestContext

router = paths.router("identity")

_FIELDS = {"blob": STRING, "type": {"type": "string", "maxLength": 255}}
POLICY_CREATE = schema(_FIELDS, ["blob", "type"])
POLICY_UPDATE = {**schema(_FIELDS), "minProperties": 1}
_KNOWN = {"id", "links", *_FIELDS}


def policy_view(request: Request, policy: Policy) -> dict[str, Any]:
    return {**policy.extra, "id": policy.id, "type": policy.type, "blob": policy.blob,
            "links": {"self": f"{v3(request)}/policies/{policy.id}"}}


@router.post("/v3/policies", status_code=201, openapi_extra=body_doc("policy", POLICY_CREATE))
async def create_policy(request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    require_admin(ctx, "create_policy")
    body = await resource_body(request, "policy", POLICY_CREATE)
    policy = await cloud(request).identity.policies.create(
        type=body["type"], blob=body["blob"], extra={k: v for k, v in body.items() if k not in _KNOWN})
    return {"policy": policy_view(request, policy)}


@router.get("/v3/policies")
async def list_policies(request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    require_reader(ctx, "list_policies")
    policies = await cloud(request).identity.policies.list(type=request.query_params.get("type"))
    return listing(request, "policies", [policy_view(request, p) for p in policies])


@router.get("/v3/policies/{policy_id}")
async def get_policy(policy_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    require_reader(ctx, "get_policy")
    return {"policy": policy_view(request, await cloud(request).identity.policies.get(policy_id))}


@router.patch("/v3/policies/{policy_id}", openapi_extra=body_doc("policy", POLICY_UPDATE))
async def update_policy(policy_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    require_admin(ctx, "update_policy")
    body = await resource_body(request, "policy", POLICY_UPDATE)
    if body.get("id") is not None and body["id"] != policy_id:
        raise ie.ValidationError(reason="Cannot change ID")
    policy = await cloud(request).identity.policies.update(
        policy_id, type=body.get("type"), blob=body.get("blob"),
        extra={k: v for k, v in body.items() if k not in _KNOWN})
    return {"policy": policy_view(request, policy)}


@router.delete("/v3/policies/{policy_id}", status_code=204)
async def delete_policy(policy_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> Response:
    require_admin(ctx, "delete_policy")
    await cloud(request).identity.policies.delete(policy_id)
    return Response(status_code=204)
