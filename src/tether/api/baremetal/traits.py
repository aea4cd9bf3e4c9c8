"""/v1/nodes/{node}/traits: list, replace, add one, remove one or all (from 1.37)."""

from __future__ import annotations

from typing import Any

from fastapi import Request, Response

from tether.api import openapi, paths
from tether.api.baremetal import errors, params, views
from tether.api.baremetal.nodes import find_node, service
from tether.api.deps import json_object
from tether.api.versions import Microversion
from tether.domain.baremetal_traits import CUSTOM_TRAIT, MAX_TRAIT_LENGTH, is_valid_trait
from tether.domain.errors import baremetal as be
from tether.services.context import RequestContext

router = paths.router("baremetal")

# ironic's api_utils.TRAITS_SCHEMA (the standard names' enum is checked apart: it is long).
TRAIT_SCHEMA = {"type": "string", "minLength": 1, "maxLength": MAX_TRAIT_LENGTH}
TRAITS_BODY = openapi.obj({"traits": {"type": "array", "items": TRAIT_SCHEMA}})
_USAGE = ("A single node trait may be added via PUT /v1/nodes/<node identifier>/traits/<trait> with no body, or all "
          "node traits may be replaced via PUT /v1/nodes/<node identifier>/traits with the list of traits specified "
          "in the request body.")


def check_trait(what: str, trait: Any) -> str:
    """A trait as ironic's schema takes it: a standard os-traits name or CUSTOM_[A-Z0-9_]+, 1 to 255 characters."""
    params.check_schema(what, trait, TRAIT_SCHEMA)
    if not is_valid_trait(trait):
        raise be.InvalidParameterValue(
            err=f"Schema error for {what}: {trait!r} is not valid under any of the given schemas (a standard "
                f"trait, or one matching {CUSTOM_TRAIT.pattern!r})")
    return str(trait)


async def _node_uuid(request: Request, ctx: RequestContext, ident: str, version: Microversion) -> str:
    if params.minor(version) < 37:
        # Before 1.37 ironic routes these paths to the node itself: a GET asks for a field "traits" the
        # version lacks (406), a PUT is a method nodes do not take (405), a DELETE finds nothing (404).
        if request.method == "GET":
            raise errors.NotAcceptable()
        if request.method == "PUT":
            raise errors.MethodNotAllowed("The method is not allowed for the requested URL.")
        raise be.NotFound("The resource could not be found.")
    return (await find_node(request, ctx, ident, version)).uuid


def _location(request: Request, ident: str, trait: str) -> dict[str, str]:
    return {"Location": views.link("self", views.public_url(request), "nodes", f"{ident}/traits/{trait}")["href"]}


@router.get("/nodes/{ident}/traits")
async def list_traits(ident: str, request: Request, ctx: params.admin("baremetal:node:traits:list"),
                      version: params.Version) -> dict[str, Any]:
    params.query(request, ())
    node = await _node_uuid(request, ctx, ident, version)
    return {"traits": await service(request).list_traits(ctx, node)}


@router.put("/nodes/{ident}/traits", status_code=204, openapi_extra=openapi.extra(openapi.json_body(TRAITS_BODY)))
async def set_traits(ident: str, request: Request, ctx: params.admin("baremetal:node:traits:set"),
                     version: params.Version) -> Response:
    params.query(request, ())
    node = await _node_uuid(request, ctx, ident, version)
    body = await json_object(request) if await request.body() else {}
    params.check_schema("body", body, TRAITS_BODY)
    if "traits" not in body:
        raise be.Invalid(reason=_USAGE)
    traits = [check_trait("body", trait) for trait in body["traits"]]
    await service(request).set_traits(ctx, node, traits)
    return Response(status_code=204)


@router.put("/nodes/{ident}/traits/{trait}", status_code=204)
async def add_trait(ident: str, trait: str, request: Request, ctx: params.admin("baremetal:node:traits:set"),
                    version: params.Version) -> Response:
    params.query(request, ())
    node = await _node_uuid(request, ctx, ident, version)
    check_trait("trait", trait)
    if await request.body():
        body = await json_object(request)
        if body:
            raise be.Invalid(reason="No body should be provided when adding a trait")
    await service(request).add_trait(ctx, node, trait)
    return Response(status_code=204, headers=_location(request, ident, trait))


@router.delete("/nodes/{ident}/traits", status_code=204)
async def remove_traits(ident: str, request: Request, ctx: params.admin("baremetal:node:traits:delete"),
                        version: params.Version) -> Response:
    params.query(request, ())
    node = await _node_uuid(request, ctx, ident, version)
    await service(request).remove_traits(ctx, node)
    return Response(status_code=204)


@router.delete("/nodes/{ident}/traits/{trait}", status_code=204)
async def remove_trait(ident: str, trait: str, request: Request, ctx: params.admin("baremetal:node:traits:delete"),
                       version: params.Version) -> Response:
    params.query(request, ())
    node = await _node_uuid(request, ctx, ident, version)
    await service(request).remove_traits(ctx, node, trait)
    return Response(status_code=204)
