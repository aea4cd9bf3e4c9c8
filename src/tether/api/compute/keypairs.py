"""/os-keypairs: create (generated or imported), list (paged from 2.35), show, delete, as nova answers.

Typed from 2.2 (ssh or x509; 201 and 204 from then on), another user's for
admins from 2.10 (``user_id``), and from 2.92 nova generates no keys: a
public key is required, and names may hold '@' and '.'.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from fastapi import Depends, Query, Request, Response
from fastapi.responses import JSONResponse
from pydantic import StrictStr

from tether.api import paths
from tether.api.compute import views
from tether.api.compute.bodies import Body, fail, unexpected
from tether.api.compute.query import PageQuery, Text, next_links
from tether.api.deps import caller, cloud
from tether.api.versions import Microversion
from tether.domain.keypairs import SSH, Keypair
from tether.services.context import RequestContext

router = paths.router("compute")

_NAME = re.compile(r"^[_\- a-zA-Z0-9]+$")
_NAME_2_92 = re.compile(r"^[_\-@. a-zA-Z0-9]+$")


class KeypairCreate(Body):
    name: StrictStr
    public_key: StrictStr | None = None
    type: Literal["ssh", "x509"] | None = None
    user_id: StrictStr | None = None


class KeypairCreateRequest(Body):
    keypair: KeypairCreate


class OwnerQuery(PageQuery):
    user_id: Text = None


def _check_name(name: str, version: Microversion) -> str:
    pattern = _NAME_2_92 if version.at_least("2.92") else _NAME
    if not 1 <= len(name) <= 255 or not pattern.match(name) or name != name.strip():
        raise fail(f"Invalid input for field/attribute name. Value: {name}. '{name}' does not match "
                   f"'{pattern.pattern}'")
    return name


def _owner(query: OwnerQuery, version: Microversion) -> str | None:
    return query.user_id if version.at_least("2.10") else None


def keypair_body(keypair: Keypair, version: Microversion, *, full: bool) -> dict[str, Any]:
    body: dict[str, Any] = {"name": keypair.name, "public_key": keypair.public_key,
                            "fingerprint": keypair.fingerprint}
    if full:
        body.update({"user_id": keypair.user_id, "created_at": views.naive_time(keypair.created_at),
                     "deleted": False, "deleted_at": None, "id": keypair.id, "updated_at": None})
    if version.at_least("2.2"):
        body["type"] = keypair.type
    return body


@router.post("/os-keypairs")
async def create_keypair(request: Request, parsed: KeypairCreateRequest,
                         ctx: RequestContext = Depends(caller)) -> JSONResponse:
    version: Microversion = request.state.microversion
    asked = parsed.keypair
    for name, since in (("type", "2.2"), ("user_id", "2.10")):
        if name in asked.given() and not version.at_least(since):
            raise unexpected("keypair", name)
    if version.at_least("2.92") and asked.public_key is None:
        raise fail("Invalid input for field/attribute keypair. 'public_key' is a required property")
    keypair, private_key = await cloud(request).compute.create_keypair(
        ctx, _check_name(asked.name, version), public_key=asked.public_key, key_type=asked.type or SSH,
        user_id=asked.user_id)
    body = keypair_body(keypair, version, full=False)
    body["user_id"] = keypair.user_id
    if private_key is not None:
        body["private_key"] = private_key
    return JSONResponse({"keypair": body}, status_code=201 if version.at_least("2.2") else 200)


@router.get("/os-keypairs")
async def list_keypairs(request: Request, query: Annotated[OwnerQuery, Query()],
                        ctx: RequestContext = Depends(caller)) -> JSONResponse:
    version: Microversion = request.state.microversion
    links: dict[str, Any] = {}
    if version.at_least("2.35"):
        limit, marker = query.page()
        keypairs = await cloud(request).compute.keypairs(ctx, user_id=_owner(query, version), limit=limit,
                                                         marker=marker)
        links = next_links(request, "os-keypairs", keypairs, keypairs[-1].name if keypairs else None,
                           "keypairs_links")
    else:
        keypairs = await cloud(request).compute.keypairs(ctx, user_id=_owner(query, version))
    return JSONResponse({"keypairs": [{"keypair": keypair_body(keypair, version, full=False)}
                                      for keypair in keypairs], **links})


@router.get("/os-keypairs/{name}")
async def show_keypair(name: str, request: Request, query: Annotated[OwnerQuery, Query()],
                       ctx: RequestContext = Depends(caller)) -> JSONResponse:
    version: Microversion = request.state.microversion
    keypair = await cloud(request).compute.keypair(ctx, name, user_id=_owner(query, version))
    return JSONResponse({"keypair": keypair_body(keypair, version, full=True)})


@router.delete("/os-keypairs/{name}")
async def delete_keypair(name: str, request: Request, query: Annotated[OwnerQuery, Query()],
                         ctx: RequestContext = Depends(caller)) -> Response:
    version: Microversion = request.state.microversion
    await cloud(request).compute.delete_keypair(ctx, name, user_id=_owner(query, version))
    return Response(status_code=204 if version.at_least("2.2") else 202)

