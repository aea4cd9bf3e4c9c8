"""``/v2/metadefs`` and ``/v2/schemas/metadefs/*``: glance's metadata definitions catalog over HTTP."""

from __future__ import annotations

from typing import Any

from fastapi import Depends, Request, Response
from fastapi.responses import JSONResponse

from tether.api import openapi, paths
from tether.api.deps import caller, cloud
from tether.api.image.bodies import request_body
from tether.api.image.views import isotime
from tether.domain import metadefs as rules
from tether.domain.errors.image import ImageBadRequest, MetadefNotFound
from tether.domain.metadefs import MetadefNamespace
from tether.services.context import RequestContext
from tether.services.image.metadefs import MetadefCatalog

router = paths.router("image")

NAMESPACES = "/v2/metadefs/namespaces"
# the moment glance's seeded resource types date from, as far as a client can tell: Tether's first release
RESOURCE_TYPES_CREATED = "2026-01-01T00:00:00Z"


def _catalog(request: Request) -> MetadefCatalog:
    return cloud(request).image.metadefs


async def _body(request: Request) -> Any:
    body = await request_body(request)
    if not isinstance(body, dict):
        raise ImageBadRequest(reason=f"Provided object does not match schema: {body!r} is not of type 'object'")
    return body


# -- views --------------------------------------------------------------------


def _stamped(item: dict[str, Any]) -> dict[str, Any]:
    return {**item, "created_at": isotime(item["created_at"]), "updated_at": isotime(item["updated_at"])}


def _object_view(namespace: str, item: dict[str, Any]) -> dict[str, Any]:
    view = {key: value for key, value in _stamped(item).items() if value is not None}
    return {**view, "self": f"{NAMESPACES}/{namespace}/objects/{item['name']}",
            "schema": "/v2/schemas/metadefs/object"}


def _namespace_view(namespace: MetadefNamespace, *, full: bool = False) -> dict[str, Any]:
    view: dict[str, Any] = {"namespace": namespace.namespace, "visibility": namespace.visibility,
                            "protected": namespace.protected, "owner": namespace.owner,
                            "created_at": isotime(namespace.created_at), "updated_at": isotime(namespace.updated_at),
                            "schema": "/v2/schemas/metadefs/namespace",
                            "self": f"{NAMESPACES}/{namespace.namespace}"}
    for optional in ("display_name", "description"):
        if getattr(namespace, optional) is not None:
            view[optional] = getattr(namespace, optional)
    if namespace.resource_types:
        view["resource_type_associations"] = [_stamped(item) for item in namespace.resource_types]
    if full:
        if namespace.properties:
            view["properties"] = namespace.properties
        if namespace.objects:
            view["objects"] = [_object_view(namespace.namespace, item) for item in namespace.objects.values()]
        if namespace.tags:
            view["tags"] = [{"name": name} for name in namespace.tags]
    return view


# -- resource types and namespaces ------------------------------------------------


@router.get("/metadefs/resource_types")
async def list_resource_types(ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    return {"resource_types": [{"name": name, "created_at": RESOURCE_TYPES_CREATED,
                                "updated_at": RESOURCE_TYPES_CREATED} for name in rules.RESOURCE_TYPES]}


@router.get("/metadefs/namespaces")
async def list_namespaces(request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    visibility = request.query_params.get("visibility")
    if visibility is not None:
        rules.check_visibility(visibility)
    wanted = request.query_params.get("resource_types")
    found = await _catalog(request).list_namespaces(ctx, visibility=visibility,
                                                    resource_types=wanted.split(",") if wanted else None)
    return {"namespaces": [_namespace_view(namespace) for namespace in found], "first": NAMESPACES,
            "schema": "/v2/schemas/metadefs/namespaces"}


@router.post("/metadefs/namespaces", status_code=201,
              openapi_extra=openapi.extra(openapi.json_body(
                  openapi.obj({"namespace": openapi.STRING}, ["namespace"], closed=False))))
async def create_namespace(request: Request, ctx: RequestContext = Depends(caller)) -> JSONResponse:
    namespace = await _catalog(request).create_namespace(ctx, await _body(request))
    return JSONResponse(_namespace_view(namespace, full=True), status_code=201)


@router.get("/metadefs/namespaces/{namespace}")
async def show_namespace(namespace: str, request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    return _namespace_view(await _catalog(request).get_namespace(ctx, namespace), full=True)


@router.put("/metadefs/namespaces/{namespace}",
              openapi_extra=openapi.extra(openapi.json_body(
                  openapi.obj({"namespace": openapi.STRING}, ["namespace"], closed=False))))
async def update_namespace(namespace: str, request: Request,
                           ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    return _namespace_view(await _catalog(request).update_namespace(ctx, namespace, await _body(request)))


@router.delete("/metadefs/namespaces/{namespace}", status_code=204)
async def delete_namespace(namespace: str, request: Request, ctx: RequestContext = Depends(caller)) -> Response:
    await _catalog(request).delete_namespace(ctx, namespace)
    return Response(status_code=204)


# -- resource type associations ------------------------------------------------------


@router.get("/metadefs/namespaces/{namespace}/resource_types")
async def list_associations(namespace: str, request: Request,
                            ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    found = await _catalog(request).get_namespace(ctx, namespace)
    return {"resource_type_associations": [_stamped(item) for item in found.resource_types]}


@router.post("/metadefs/namespaces/{namespace}/resource_types", status_code=201,
              openapi_extra=openapi.extra(openapi.json_body(
                  openapi.obj({"name": openapi.STRING}, ["name"], closed=False))))
async def associate(namespace: str, request: Request, ctx: RequestContext = Depends(caller)) -> JSONResponse:
    association = await _catalog(request).associate(ctx, namespace, await _body(request))
    return JSONResponse(_stamped(association), status_code=201)


@router.delete("/metadefs/namespaces/{namespace}/resource_types/{resource_type}", status_code=204)
async def dissociate(namespace: str, resource_type: str, request: Request,
                     ctx: RequestContext = Depends(caller)) -> Response:
    await _catalog(request).dissociate(ctx, namespace, resource_type)
    return Response(status_code=204)


# -- objects -------------------------------------------------------------------------


@router.get("/metadefs/namespaces/{namespace}/objects")
async def list_objects(namespace: str, request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    found = await _catalog(request).get_namespace(ctx, namespace)
    return {"objects": [_object_view(namespace, item) for item in found.objects.values()],
            "schema": "/v2/schemas/metadefs/objects"}


@router.post("/metadefs/namespaces/{namespace}/objects", status_code=201,
              openapi_extra=openapi.extra(openapi.json_body(
                  openapi.obj({"name": openapi.STRING}, ["name"], closed=False))))
async def create_object(namespace: str, request: Request, ctx: RequestContext = Depends(caller)) -> JSONResponse:
    item = await _catalog(request).add_object(ctx, namespace, await _body(request))
    return JSONResponse(_object_view(namespace, item), status_code=201)


@router.delete("/metadefs/namespaces/{namespace}/objects", status_code=204)
async def delete_objects(namespace: str, request: Request, ctx: RequestContext = Depends(caller)) -> Response:
    await _catalog(request).delete_objects(ctx, namespace)
    return Response(status_code=204)


@router.get("/metadefs/namespaces/{namespace}/objects/{name}")
async def show_object(namespace: str, name: str, request: Request,
                      ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    found = await _catalog(request).get_namespace(ctx, namespace)
    if name not in found.objects:
        raise MetadefNotFound(reason=f"The metadata definition object with name={name} was not found in "
                                     f"namespace={namespace}.")
    return _object_view(namespace, found.objects[name])


@router.put("/metadefs/namespaces/{namespace}/objects/{name}",
              openapi_extra=openapi.extra(openapi.json_body(
                  openapi.obj({"name": openapi.STRING}, ["name"], closed=False))))
async def update_object(namespace: str, name: str, request: Request,
                        ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    item = await _catalog(request).update_object(ctx, namespace, name, await _body(request))
    return _object_view(namespace, item)


@router.delete("/metadefs/namespaces/{namespace}/objects/{name}", status_code=204)
async def delete_object(namespace: str, name: str, request: Request, ctx: RequestContext = Depends(caller)) -> Response:
    await _catalog(request).delete_object(ctx, namespace, name)
    return Response(status_code=204)


# -- properties ----------------------------------------------------------------------


@router.get("/metadefs/namespaces/{namespace}/properties")
async def list_properties(namespace: str, request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    found = await _catalog(request).get_namespace(ctx, namespace)
    return {"properties": found.properties}


@router.post("/metadefs/namespaces/{namespace}/properties", status_code=201,
              openapi_extra=openapi.extra(openapi.json_body(
                  openapi.obj({"name": openapi.STRING, "title": openapi.STRING, "type": openapi.STRING}, ["name",
                    "title", "type"], closed=False))))
async def create_property(namespace: str, request: Request, ctx: RequestContext = Depends(caller)) -> JSONResponse:
    return JSONResponse(await _catalog(request).add_property(ctx, namespace, await _body(request)), status_code=201)


@router.delete("/metadefs/namespaces/{namespace}/properties", status_code=204)
async def delete_properties(namespace: str, request: Request, ctx: RequestContext = Depends(caller)) -> Response:
    await _catalog(request).delete_properties(ctx, namespace)
    return Response(status_code=204)


@router.get("/metadefs/namespaces/{namespace}/properties/{name}")
async def show_property(namespace: str, name: str, request: Request,
                        ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    found = await _catalog(request).get_namespace(ctx, namespace)
    if name not in found.properties:
        raise MetadefNotFound(reason=f"The metadata definition property with name={name} was not found in "
                                     f"namespace={namespace}.")
    return found.properties[name]


@router.put("/metadefs/namespaces/{namespace}/properties/{name}",
              openapi_extra=openapi.extra(openapi.json_body(
                  openapi.obj({"name": openapi.STRING, "title": openapi.STRING, "type": openapi.STRING}, ["name",
                    "title", "type"], closed=False))))
async def update_property(namespace: str, name: str, request: Request,
                          ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    return await _catalog(request).update_property(ctx, namespace, name, await _body(request))


@router.delete("/metadefs/namespaces/{namespace}/properties/{name}", status_code=204)
async def delete_property(namespace: str, name: str, request: Request,
                          ctx: RequestContext = Depends(caller)) -> Response:
    await _catalog(request).delete_property(ctx, namespace, name)
    return Response(status_code=204)


# -- tags ----------------------------------------------------------------------------


@router.get("/metadefs/namespaces/{namespace}/tags")
async def list_tags(namespace: str, request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    found = await _catalog(request).get_namespace(ctx, namespace)
    return {"tags": [_stamped(tag) for tag in found.tags.values()]}


@router.post("/metadefs/namespaces/{namespace}/tags", status_code=201,
              openapi_extra=openapi.extra(openapi.json_body(
                  openapi.obj({"tags": {"type": "array", "items": openapi.obj({"name": openapi.STRING}, ["name"])}},
                    ["tags"], closed=False))))
async def create_tags(namespace: str, request: Request, ctx: RequestContext = Depends(caller)) -> JSONResponse:
    """Replace the namespace's tags, or add to them with ``X-Openstack-Append: True``."""
    body = await _body(request)
    tags = body.get("tags")
    if not isinstance(tags, list):
        raise ImageBadRequest(reason="Provided object does not match schema 'tags': 'tags' is a required array")
    append = request.headers.get("x-openstack-append", "false").lower() == "true"
    created = await _catalog(request).set_tags(ctx, namespace, tags, append=append)
    return JSONResponse({"tags": [{"name": tag["name"]} for tag in created]}, status_code=201)


@router.delete("/metadefs/namespaces/{namespace}/tags", status_code=204)
async def delete_tags(namespace: str, request: Request, ctx: RequestContext = Depends(caller)) -> Response:
    await _catalog(request).delete_tags(ctx, namespace)
    return Response(status_code=204)


@router.post("/metadefs/namespaces/{namespace}/tags/{name}", status_code=201)
async def create_tag(namespace: str, name: str, request: Request,
                     ctx: RequestContext = Depends(caller)) -> JSONResponse:
    return JSONResponse(_stamped(await _catalog(request).add_tag(ctx, namespace, name)), status_code=201)


@router.get("/metadefs/namespaces/{namespace}/tags/{name}")
async def show_tag(namespace: str, name: str, request: Request,
                   ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    found = await _catalog(request).get_namespace(ctx, namespace)
    if name not in found.tags:
        raise MetadefNotFound(reason=f"The metadata definition tag with name={name} was not found in "
                                     f"namespace={namespace}.")
    return _stamped(found.tags[name])


@router.put("/metadefs/namespaces/{namespace}/tags/{name}")
async def update_tag(namespace: str, name: str, request: Request,
                     ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    body = await _body(request)
    return _stamped(await _catalog(request).rename_tag(ctx, namespace, name, body.get("name")))


@router.delete("/metadefs/namespaces/{namespace}/tags/{name}", status_code=204)
async def delete_tag(namespace: str, name: str, request: Request, ctx: RequestContext = Depends(caller)) -> Response:
    await _catalog(request).delete_tag(ctx, namespace, name)
    return Response(status_code=204)


# -- schemas -------------------------------------------------------------------------

_TIMESTAMPS = {"created_at": {"type": "string", "readOnly": True, "format": "date-time"},
               "updated_at": {"type": "string", "readOnly": True, "format": "date-time"}}
_PROPERTY = {"type": "object", "required": ["title", "type"],
             "properties": {"name": {"type": "string", "maxLength": rules.MAX_NAME},
                            "title": {"type": "string"}, "description": {"type": "string"},
                            "type": {"type": "string", "enum": list(rules.PROPERTY_TYPES)},
                            "enum": {"type": "array"}, "default": {}, "readonly": {"type": "boolean"}}}
_ASSOCIATION = {"name": {"type": "string", "maxLength": rules.MAX_NAME}, "prefix": {"type": "string"},
                "properties_target": {"type": "string"}, **_TIMESTAMPS}
_OBJECT = {"name": {"type": "string", "maxLength": rules.MAX_NAME}, "description": {"type": "string"},
           "required": {"type": "array", "items": {"type": "string"}},
           "properties": {"type": "object", "additionalProperties": _PROPERTY},
           "schema": {"type": "string", "readOnly": True}, "self": {"type": "string", "readOnly": True},
           **_TIMESTAMPS}
_TAG = {"name": {"type": "string", "maxLength": rules.MAX_NAME}, **_TIMESTAMPS}
_NAMESPACE = {
    "namespace": {"type": "string", "maxLength": rules.MAX_NAME},
    "display_name": {"type": "string"}, "description": {"type": "string"},
    "visibility": {"type": "string", "enum": list(rules.VISIBILITIES)},
    "protected": {"type": "boolean"}, "owner": {"type": "string"},
    "resource_type_associations": {"type": "array", "items": {"type": "object", "properties": _ASSOCIATION}},
    "properties": {"type": "object", "additionalProperties": _PROPERTY},
    "objects": {"type": "array", "items": {"type": "object", "properties": _OBJECT}},
    "tags": {"type": "array", "items": {"type": "object", "properties": _TAG}},
    "schema": {"type": "string", "readOnly": True}, "self": {"type": "string", "readOnly": True}, **_TIMESTAMPS,
}


def _one(name: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"name": name, "properties": properties, "required": required, "additionalProperties": False}


def _many(name: str, key: str, item: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "properties": {key: {"type": "array", "items": item}, "first": {"type": "string"},
                                         "next": {"type": "string"}, "schema": {"type": "string"}},
            "links": [{"rel": "first", "href": "{first}"}, {"rel": "next", "href": "{next}"},
                      {"rel": "describedby", "href": "{schema}"}]}


SCHEMAS: dict[str, dict[str, Any]] = {
    "namespace": _one("namespace", _NAMESPACE, ["namespace"]),
    "namespaces": _many("namespaces", "namespaces", _one("namespace", _NAMESPACE, ["namespace"])),
    "resource_type": _one("resource_type_association", _ASSOCIATION, ["name"]),
    "resource_types": _many("resource_type_associations", "resource_type_associations",
                            _one("resource_type_association", _ASSOCIATION, ["name"])),
    "object": _one("object", _OBJECT, ["name"]),
    "objects": _many("objects", "objects", _one("object", _OBJECT, ["name"])),
    "property": {"name": "property", **_PROPERTY},
    "properties": {"name": "properties", "properties": {"properties": {"type": "object",
                                                                       "additionalProperties": _PROPERTY}}},
    "tag": _one("tag", _TAG, ["name"]),
    "tags": _many("tags", "tags", _one("tag", _TAG, ["name"])),
}


@router.get("/schemas/metadefs/{kind}")
async def metadef_schema(kind: str, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    if kind not in SCHEMAS:
        raise MetadefNotFound(reason="The resource could not be found.")
    return SCHEMAS[kind]
