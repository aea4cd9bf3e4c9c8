"""``/v2/images/{id}/members[/{member}]``: share an image with a project, and its answer."""

from __future__ import annotations

from typing import Any

from fastapi import Depends, Request, Response

from tether.api import openapi, paths
from tether.api.deps import caller, cloud
from tether.api.image.bodies import request_body
from tether.api.image.views import MEMBERS_SCHEMA, member_view
from tether.domain.errors.image import ImageBadRequest
from tether.services.context import RequestContext
from tether.services.image.members import ImageMembers

router = paths.router("image")


def _members(request: Request) -> ImageMembers:
    return cloud(request).image.members


async def _body(request: Request, key: str, example: str) -> Any:
    body = await request_body(request)
    if not isinstance(body, dict):
        raise ImageBadRequest(reason=f'Expected a {key} in the form: {{"{key}": "{example}"}}')
    if key not in body:
        raise ImageBadRequest(reason=f"{key.capitalize()} {'to be added ' if key == 'member' else ''}not specified")
    return body[key]


@router.post("/images/{image_id}/members",
              openapi_extra=openapi.extra(openapi.json_body(openapi.obj({"member": openapi.STRING}, ["member"]))))
async def add_member(image_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    member_id = await _body(request, "member", "image_id")
    if not member_id:
        raise ImageBadRequest(reason="Member can't be empty")
    if not isinstance(member_id, str):
        raise ImageBadRequest(reason='Expected a member in the form: {"member": "image_id"}')
    return member_view(await _members(request).add(ctx, image_id, member_id))


@router.get("/images/{image_id}/members")
async def list_members(image_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    members = await _members(request).list(ctx, image_id)
    return {"members": [member_view(member) for member in members], "schema": MEMBERS_SCHEMA}


@router.get("/images/{image_id}/members/{member_id}")
async def show_member(image_id: str, member_id: str, request: Request,
                      ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    return member_view(await _members(request).get(ctx, image_id, member_id))


@router.put("/images/{image_id}/members/{member_id}",
              openapi_extra=openapi.extra(openapi.json_body(
                  openapi.obj({"status": {"type": "string", "enum": ["pending", "accepted", "rejected"]}},
                    ["status"]))))
async def update_member(image_id: str, member_id: str, request: Request,
                        ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    status = await _body(request, "status", "status")
    return member_view(await _members(request).set_status(ctx, image_id, member_id, status))


@router.delete("/images/{image_id}/members/{member_id}", status_code=204)
async def delete_member(image_id: str, member_id: str, request: Request,
                        ctx: RequestContext = Depends(caller)) -> Response:
    await _members(request).remove(ctx, image_id, member_id)
    return Response(status_code=204)
