"""The five calls every neutron collection answers: create (one or a bulk), list, show, update, delete."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request, Response
from fastapi.responses import JSONResponse

from tether.api import jsonbody, openapi
from tether.api.deps import caller, cloud
from tether.api.network import attributes, listing
from tether.api.network import l3_attributes as l3a
from tether.api.network import security_group_attributes as sga
from tether.api.network.attributes import Attr, Resource
from tether.api.network.collections import Collection
from tether.api.network.errors import HTTPBadRequest, MalformedRequestBody, neutron_errors
from tether.api.network.views import for_caller
from tether.domain.network import VNIC_TYPES
from tether.services.context import RequestContext
from tether.services.network import NetworkService


def _service(request: Request) -> NetworkService:
    return cloud(request).network


async def read_body(request: Request) -> Any:
    raw = await request.body()
    if not raw:
        raise HTTPBadRequest("Resource body required")
    try:
        return jsonbody.loads(raw)
    except ValueError as error:  # JSONDecodeError and UnicodeDecodeError among them
        raise MalformedRequestBody(reason=str(error)) from None


# What each attribute's conversion accepts, for the OpenAPI document.
_SCHEMAS: dict[Any, openapi.Schema] = {
    attributes.to_boolean: {"type": "boolean"}, attributes.to_int: {"type": "integer"},
    attributes.to_ip_version: {"type": "integer", "enum": [4, 6]}, attributes.to_string: {"type": "string"},
    attributes.to_string_or_none: {"type": ["string", "null"]}, attributes.to_uuid: openapi.UUID,
    attributes.to_list: {"type": "array"}, attributes.to_list_or_empty: {"type": ["array", "null"]},
    attributes.to_dict_or_empty: {"type": ["object", "null"]},
    attributes.to_mac_or_none: {"type": ["string", "null"], "pattern": "^([0-9a-fA-F]{2}:){5}[0-9a-fA-F]{2}$"},
    attributes.to_vnic_type: {"type": "string", "enum": list(VNIC_TYPES)},
    attributes.no_subnet_pools: {"type": "integer"},
    attributes.passthrough: {},
    sga.to_direction: {"type": "string", "enum": ["ingress", "egress"]},
    sga.to_protocol: {"type": ["string", "integer", "null"]},
    sga.to_ethertype: {"type": "string"},
    sga.to_port: {"type": ["integer", "null"], "minimum": 0, "maximum": 65535},
    sga.to_ip_prefix: {"type": ["string", "null"]},
    sga.to_group_id: {"type": ["string", "null"]},
    l3a.to_uuid_or_none: {"type": ["string", "null"]},
    l3a.to_string_or_none: {"type": ["string", "null"]},
}


def _attr_schema(attr: Attr) -> openapi.Schema:
    if attr.convert is None:
        return {} if attr.fixed is attributes.UNSET else {"enum": [attr.fixed]}
    return dict(_SCHEMAS[attr.convert])


def _body_schema(resource: Resource, *, create: bool) -> openapi.Schema:
    """neutron's request body: ``{"port": {...}}``, or on create a bulk ``{"ports": [{...}, ...]}``."""
    given = [attr for attr in resource.attributes if (attr.post if create else attr.put)]
    item = openapi.obj({attr.name: _attr_schema(attr) for attr in given},
                       [attr.name for attr in given if create and attr.required])
    single = openapi.obj({resource.singular: item}, [resource.singular])
    if not create:
        return single
    bulk = openapi.obj({resource.plural: {"type": "array", "minItems": 1, "items": item}}, [resource.plural])
    return {"anyOf": [single, bulk]}


def _list_query(resource: Resource) -> list[openapi.Schema]:
    filters = {attr.name: {"type": "string"} if attr.convert not in _SCHEMAS else
               {key: value for key, value in _attr_schema(attr).items() if key != "pattern"}
               for attr in resource.attributes if attr.filter and attr.visible}
    for schema in filters.values():
        if isinstance(schema.get("type"), list):  # a query value is never null
            schema["type"] = next(kind for kind in schema["type"] if kind != "null")
        if schema.get("type") in ("array", "object"):
            schema["type"] = "string"
    return openapi.query({
        **filters, "fields": openapi.STRING, "limit": openapi.LIMIT, "marker": openapi.STRING,
        "sort_key": {"type": "string", "enum": [attr.name for attr in resource.attributes if attr.sort]},
        "sort_dir": openapi.SORT_DIR, "page_reverse": {"type": "boolean"}, "changed_since": openapi.DATE_TIME,
    })


def add_routes(router: APIRouter, collection: Collection) -> None:
    resource = collection.resource
    singular, plural = resource.singular, resource.plural
    path = plural.replace("_", "-")  # /security-groups holds {"security_groups": [...]}

    async def create(request: Request, ctx: RequestContext = Depends(caller)) -> JSONResponse:
        with neutron_errors():
            items, bulk = attributes.body_items(resource, await read_body(request))
            specs = [collection.create_spec(item, ctx) for item in items]
            service = _service(request)
            shown = [for_caller(resource, view, ctx)
                     for view in await collection.render(service, await collection.create(service, ctx, specs))]
        body = {plural: shown} if bulk else {singular: shown[0]}
        return JSONResponse(body, status_code=201)

    async def index(request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
        with neutron_errors():
            params = request.query_params.multi_items()
            query = listing.parse_query(resource, params)
            service = _service(request)
            marker = None
            if query.limit is not None and query.marker is not None:
                marker = await collection.get(service, ctx, query.marker)
            shown = await collection.page(service, ctx, query, marker)
        body: dict[str, Any] = {plural: [for_caller(resource, view, ctx, query.fields) for view in shown]}
        if query.limit is not None:
            url = f"{request.app.state.base_url}{request.url.path}"
            body[f"{plural}_links"] = listing.links(url, params, shown, query)
        return body

    async def show(key: str, request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
        with neutron_errors():
            service = _service(request)
            (view,) = await collection.render(service, [await collection.get(service, ctx, key)])
        fields = [value for value in request.query_params.getlist("fields") if value]
        return {singular: for_caller(resource, view, ctx, fields)}

    async def update(key: str, request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
        with neutron_errors():
            items, _ = attributes.body_items(resource, await read_body(request), bulk_allowed=False)
            values = attributes.read_update(resource, items[0], ctx)
            service = _service(request)
            (view,) = await collection.render(service, [await collection.update(service, ctx, key, values)])
        return {singular: for_caller(resource, view, ctx)}

    async def delete(key: str, request: Request, ctx: RequestContext = Depends(caller)) -> Response:
        with neutron_errors():
            await collection.delete(_service(request), ctx, key)
        return Response(status_code=204)

    router.add_api_route(f"/{path}", create, methods=["POST"], status_code=201, name=f"create_{singular}",
                         openapi_extra=openapi.extra(openapi.json_body(_body_schema(resource, create=True))))
    router.add_api_route(f"/{path}", index, methods=["GET"], name=f"list_{plural}",
                         openapi_extra=openapi.extra(params=_list_query(resource)))
    router.add_api_route(f"/{path}/{{key}}", show, methods=["GET"], name=f"show_{singular}",
                         openapi_extra=openapi.extra(params=openapi.query({"fields": openapi.STRING})))
    router.add_api_route(f"/{path}/{{key}}", update, methods=["PUT"], name=f"update_{singular}",
                         openapi_extra=openapi.extra(openapi.json_body(_body_schema(resource, create=False))))
    router.add_api_route(f"/{path}/{{key}}", delete, methods=["DELETE"], status_code=204,
                         name=f"delete_{singular}")
