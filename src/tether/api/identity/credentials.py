"""Keystone's /v3/credentials and OS-EC2's /v3/users/{user_id}/credentials/OS-EC2, with keystone's
default policies: an admin manages every credential, a system reader reads them, and everyone else
manages their own."""

from __future__ import annotations

import json
from typing import Any

from fastapi import Depends, Request, Response

from tether.api import openapi, paths
from tether.api.deps import caller, cloud, json_object
from tether.api.identity.common import (
    NULLABLE_STRING,
    STRING,
    body_doc,
    is_reader,
    listing,
    resource_body,
    schema,
    v3,
)
from tether.domain.errors import identity as ie
from tether.domain.identity import Credential
from tether.services.context import RequestContext

router = paths.router("identity")

_FIELDS = {"blob": STRING, "project_id": NULLABLE_STRING, "type": STRING, "user_id": STRING}
CREDENTIAL_CREATE = schema({"id": STRING, **_FIELDS}, ["blob", "type", "user_id"])
CREDENTIAL_UPDATE = {**schema(_FIELDS), "minProperties": 1}
EC2_CREATE = openapi.obj({"tenant_id": openapi.STRING}, ["tenant_id"], closed=False)
_KNOWN = {"id", "links", *_FIELDS}


def credential_view(request: Request, credential: Credential) -> dict[str, Any]:
    return {**credential.extra, "id": credential.id, "user_id": credential.user_id,
            "project_id": credential.project_id, "type": credential.type, "blob": credential.blob,
            "links": {"self": f"{v3(request)}/credentials/{credential.id}"}}


def ec2_view(request: Request, credential: Credential) -> dict[str, Any]:
    blob = json.loads(credential.blob)
    return {"user_id": credential.user_id, "tenant_id": credential.project_id, "access": blob.get("access"),
            "secret": blob.get("secret"), "trust_id": blob.get("trust_id"),
            "links": {"self": f"{v3(request)}/users/{credential.user_id}/credentials/OS-EC2/{blob.get('access')}"}}


def _owner_or_admin(ctx: RequestContext, user_id: str, action: str, *, read: bool = False) -> None:
    """keystone's ADMIN_OR_CRED_OWNER (and, to read, ADMIN_OR_SYSTEM_READER_OR_CRED_OWNER)."""
    if ctx.is_admin or ctx.user_id == user_id or (read and is_reader(ctx)):
        return
    raise ie.Forbidden(action=f"identity:{action}")


# -- /v3/credentials ----------------------------------------------------------------------------------


@router.post("/v3/credentials", status_code=201, openapi_extra=body_doc("credential", CREDENTIAL_CREATE))
async def create_credential(request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    body = await resource_body(request, "credential", CREDENTIAL_CREATE)
    _owner_or_admin(ctx, body["user_id"], "create_credential")
    if body["type"] == "ec2" and "project_id" not in body:
        raise ie.ValidationError(reason="Invalid input for field 'credential': 'project_id' is a required property")
    credential = await cloud(request).identity.credentials.create(
        user_id=body["user_id"], type=body["type"], blob=body["blob"], project_id=body.get("project_id"),
        extra={key: value for key, value in body.items() if key not in _KNOWN})
    return {"credential": credential_view(request, credential)}


@router.get("/v3/credentials", openapi_extra=openapi.extra(params=openapi.query(
    {"user_id": openapi.STRING, "type": openapi.STRING})))
async def list_credentials(request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    query = request.query_params
    credentials = await cloud(request).identity.credentials.list(user_id=query.get("user_id"), type=query.get("type"))
    # keystone lists what the caller may read, and drops the rest
    if not (ctx.is_admin or is_reader(ctx)):
        credentials = [c for c in credentials if c.user_id == ctx.user_id]
    return listing(request, "credentials", [credential_view(request, c) for c in credentials])


@router.get("/v3/credentials/{credential_id}")
async def get_credential(credential_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    credential = await _readable(request, ctx, credential_id, "get_credential", read=True)
    return {"credential": credential_view(request, credential)}


@router.patch("/v3/credentials/{credential_id}", openapi_extra=body_doc("credential", CREDENTIAL_UPDATE))
async def update_credential(credential_id: str, request: Request,
                            ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    current = await _readable(request, ctx, credential_id, "update_credential")
    body = await resource_body(request, "credential", CREDENTIAL_UPDATE)
    if body.get("id") is not None and body["id"] != credential_id:
        raise ie.ValidationError(reason="Cannot change ID")
    # the owner may not hand the credential to someone else
    _owner_or_admin(ctx, body.get("user_id", current.user_id), "update_credential")
    credential = await cloud(request).identity.credentials.update(credential_id, body)
    return {"credential": credential_view(request, credential)}


@router.delete("/v3/credentials/{credential_id}", status_code=204)
async def delete_credential(credential_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> Response:
    await _readable(request, ctx, credential_id, "delete_credential")
    await cloud(request).identity.credentials.delete(credential_id)
    return Response(status_code=204)


async def _readable(request: Request, ctx: RequestContext, credential_id: str, action: str, *,
                    read: bool = False) -> Credential:
    """The credential, if the caller may act on it; keystone checks the policy before it says it is missing."""
    credentials = cloud(request).identity.credentials
    try:
        credential = await credentials.get(credential_id)
    except ie.CredentialNotFound:
        if not (ctx.is_admin or (read and is_reader(ctx))):
            raise ie.Forbidden(action=f"identity:{action}") from None
        raise
    _owner_or_admin(ctx, credential.user_id, action, read=read)
    return credential


# -- OS-EC2 -------------------------------------------------------------------------------------------

_EC2 = "/v3/users/{user_id}/credentials/OS-EC2"


@router.post(_EC2, status_code=201, openapi_extra=openapi.extra(openapi.json_body(EC2_CREATE)))
async def create_ec2_credential(user_id: str, request: Request,
                                ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    _owner_or_admin(ctx, user_id, "ec2_create_credential")
    body = await json_object(request)
    tenant_id = body.get("tenant_id")
    if not isinstance(tenant_id, str) or not tenant_id:
        raise ie.ProjectNotFound(project_id=tenant_id)
    credential = await cloud(request).identity.credentials.create_ec2(user_id, tenant_id)
    return {"credential": ec2_view(request, credential)}


@router.get(_EC2)
async def list_ec2_credentials(user_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    _owner_or_admin(ctx, user_id, "ec2_list_credentials", read=True)
    credentials = await cloud(request).identity.credentials.list_ec2(user_id)
    return listing(request, "credentials", [ec2_view(request, c) for c in credentials])


@router.get(_EC2 + "/{access}")
async def get_ec2_credential(user_id: str, access: str, request: Request,
                             ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    _owner_or_admin(ctx, user_id, "ec2_get_credential", read=True)
    credential = await cloud(request).identity.credentials.get_ec2(user_id, access)
    _owner_or_admin(ctx, credential.user_id, "ec2_get_credential", read=True)
    return {"credential": ec2_view(request, credential)}


@router.delete(_EC2 + "/{access}", status_code=204)
async def delete_ec2_credential(user_id: str, access: str, request: Request,
                                ctx: RequestContext = Depends(caller)) -> Response:
    _owner_or_admin(ctx, user_id, "ec2_delete_credential")
    credentials = cloud(request).identity.credentials
    credential = await credentials.get_ec2(user_id, access)
    _owner_or_admin(ctx, credential.user_id, "ec2_delete_credential")
    await credentials.delete(credential.id)
    return Response(status_code=204)
