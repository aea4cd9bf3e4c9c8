"""Heat's API (/orchestration/v1/{project_id}): stacks, their resources, events, outputs and template.

As heat routes them: ``/stacks/{name}`` (and anything below it) is a lookup that answers 302
with the stack's canonical address, ``/stacks/{name}/{id}``, keeping the rest of the path and
the query; keystoneauth follows it with the same method, so ``openstack stack delete s1`` and
``stack show s1`` work by name.
"""

from __future__ import annotations

from typing import Any

from fastapi import Depends, Request, Response
from fastapi.responses import JSONResponse, RedirectResponse

from tether.api import openapi, paths
from tether.api.deps import caller, cloud, json_object
from tether.api.orchestration.views import event_view, resource_view, stack_detail, stack_href, stack_summary
from tether.booleans import bool_from_string
from tether.domain.errors import orchestration as oe
from tether.domain.orchestration.resource_types import RESOURCE_TYPES
from tether.domain.orchestration.stacks import Stack
from tether.services.context import RequestContext
from tether.services.orchestration import OrchestrationService

router = paths.router("orchestration")

# What may follow a stack's name in a lookup (heat's stack_lookup routes).
LOOKUP_PATHS = ("resources", "events", "template", "outputs", "environment", "files")
LIST_QUERY = openapi.extra(params=openapi.query({
    "stack_name": openapi.STRING, "status": openapi.STRING, "limit": openapi.LIMIT, "marker": openapi.STRING,
    "sort_keys": openapi.STRING, "sort_dir": openapi.SORT_DIR, "global_tenant": openapi.STRING,
    "show_deleted": openapi.STRING, "show_nested": openapi.STRING, "tags": openapi.STRING,
}))
EVENTS_QUERY = openapi.extra(params=openapi.query({
    "limit": openapi.LIMIT, "marker": openapi.STRING, "sort_dir": openapi.SORT_DIR,
    "resource_name": openapi.STRING, "resource_status": openapi.STRING, "resource_action": openapi.STRING,
    "nested_depth": openapi.STRING,
}))


_TEMPLATE = {"oneOf": [{"type": "object"}, {"type": "string"}]}
_STACK_FIELDS = {
    "template": _TEMPLATE, "template_url": openapi.STRING, "parameters": {"type": "object"},
    "files": {"type": "object"}, "environment": _TEMPLATE, "disable_rollback": {"type": "boolean"},
    "timeout_mins": {"type": "integer", "minimum": 1}, "tags": openapi.STRING,
}
CREATE_BODY = openapi.extra(openapi.json_body(openapi.obj({"stack_name": openapi.STRING, **_STACK_FIELDS},
                                                          ["stack_name"], closed=False)))
UPDATE_BODY = openapi.extra(openapi.json_body(openapi.obj(
    {**_STACK_FIELDS, "clear_parameters": {"type": "array", "items": openapi.STRING}}, closed=False)))
VALIDATE_BODY = openapi.extra(openapi.json_body(openapi.obj(
    {key: _STACK_FIELDS[key] for key in ("template", "template_url", "parameters", "files", "environment")},
    closed=False)))


def _heat(request: Request) -> OrchestrationService:
    return cloud(request).orchestration


def _base(request: Request, project_id: str) -> str:
    return f"{request.app.state.base_url}/orchestration/v1/{project_id}"


def _own_project(ctx: RequestContext, project_id: str) -> None:
    # heat's tenant_local: a project's URL is for that project's tokens
    if project_id != ctx.project_id and not ctx.is_admin:
        raise oe.OrchestrationForbidden(action="the project in the URL")


async def _stack(request: Request, ctx: RequestContext, project_id: str, name: str, stack_id: str) -> Stack:
    _own_project(ctx, project_id)
    stack = await _heat(request).find_stack(ctx, stack_id, deleted=True)
    if name not in (stack.name, stack.id):
        raise oe.EntityNotFound(entity="Stack", name=name)
    return stack


# -- the collection ------------------------------------------------------------------------


@router.get("/{project_id}/stacks", openapi_extra=LIST_QUERY)
async def list_stacks(request: Request, project_id: str, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    _own_project(ctx, project_id)
    query = request.query_params
    filters: dict[str, Any] = {}
    if query.get("stack_name"):
        filters["name"] = query.getlist("stack_name")
    stacks = await _heat(request).list_stacks(
        ctx, all_projects=_flag("global_tenant", query.get("global_tenant")),
        with_deleted=_flag("show_deleted", query.get("show_deleted")),
        nested=_flag("show_nested", query.get("show_nested")), **filters)
    if query.get("status"):
        wanted = {status.upper() for status in query.getlist("status")}
        stacks = [stack for stack in stacks if stack.status in wanted or stack.state in wanted]
    if query.get("sort_dir", "desc") == "desc":
        stacks.reverse()  # heat's default: newest first
    if query.get("marker"):
        ids = [stack.id for stack in stacks]
        if query["marker"] not in ids:
            raise oe.EntityNotFound(entity="Stack", name=query["marker"])
        stacks = stacks[ids.index(query["marker"]) + 1:]
    if query.get("limit"):
        stacks = stacks[:_limit(query["limit"])]
    base = _base(request, project_id)
    return {"stacks": [stack_summary(base, stack) for stack in stacks]}


@router.post("/{project_id}/stacks", status_code=201, openapi_extra=CREATE_BODY)
async def create_stack(request: Request, project_id: str, ctx: RequestContext = Depends(caller)) -> JSONResponse:
    _own_project(ctx, project_id)
    body = await json_object(request)
    _refuse_template_url(body)
    if body.get("adopt_stack_data"):
        raise oe.NotSupported(feature="Stack adopt")
    stack = await _heat(request).create_stack(
        ctx, name=body.get("stack_name"), template=body.get("template"), parameters=_mapping(body, "parameters"),
        files=_mapping(body, "files"), environment=body.get("environment"),
        disable_rollback=_flag("disable_rollback", body.get("disable_rollback"), default=True),
        timeout_mins=_timeout(body.get("timeout_mins")), tags=_tags(body.get("tags")))
    base = _base(request, project_id)
    return JSONResponse({"stack": {"id": stack.id, "links": [{"href": stack_href(base, stack), "rel": "self"}]}},
                        status_code=201)


@router.post("/{project_id}/validate", openapi_extra=VALIDATE_BODY)
async def validate(request: Request, project_id: str, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    _own_project(ctx, project_id)
    body = await json_object(request)
    _refuse_template_url(body)
    return await _heat(request).validate_template(ctx, body.get("template"), files=_mapping(body, "files"),
                                                  environment=body.get("environment"),
                                                  parameters=_mapping(body, "parameters"))


@router.get("/{project_id}/resource_types")
async def resource_types(request: Request, project_id: str, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    _own_project(ctx, project_id)
    return {"resource_types": sorted(RESOURCE_TYPES)}


# -- lookups by name: 302 to the stack's own address ----------------------------------------


async def _lookup(request: Request, project_id: str, stack_name: str, rest: str,
                  ctx: RequestContext) -> RedirectResponse:
    _own_project(ctx, project_id)
    stack = await _heat(request).find_stack(ctx, stack_name, deleted=True)  # heat: an id finds a deleted stack
    target = stack_href(_base(request, project_id), stack) + rest
    if request.url.query:
        target += f"?{request.url.query}"
    return RedirectResponse(target, status_code=302)


LOOKUP_METHODS = ["GET", "PUT", "PATCH", "DELETE", "POST"]


@router.api_route("/{project_id}/stacks/{stack_name}", methods=LOOKUP_METHODS, include_in_schema=False)
async def lookup(request: Request, project_id: str, stack_name: str,
                 ctx: RequestContext = Depends(caller)) -> RedirectResponse:
    return await _lookup(request, project_id, stack_name, "", ctx)


async def lookup_below(request: Request, project_id: str, stack_name: str,
                       ctx: RequestContext = Depends(caller)) -> RedirectResponse:
    below = request.url.path.split(f"/stacks/{stack_name}", 1)[1]
    return await _lookup(request, project_id, stack_name, below, ctx)


async def lookup_deeper(request: Request, project_id: str, stack_name: str, below: str,
                        ctx: RequestContext = Depends(caller)) -> RedirectResponse:
    return await lookup_below(request, project_id, stack_name, ctx)


for _path in LOOKUP_PATHS:
    router.add_api_route(f"/{{project_id}}/stacks/{{stack_name}}/{_path}", lookup_below, methods=LOOKUP_METHODS,
                         include_in_schema=False)
    router.add_api_route(f"/{{project_id}}/stacks/{{stack_name}}/{_path}/{{below:path}}", lookup_deeper,
                         methods=LOOKUP_METHODS, include_in_schema=False)


# -- one stack -------------------------------------------------------------------------------


@router.get("/{project_id}/stacks/{stack_name}/{stack_id}")
async def show_stack(request: Request, project_id: str, stack_name: str, stack_id: str,
                     ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    stack = await _stack(request, ctx, project_id, stack_name, stack_id)
    heat = _heat(request)
    resolve = _flag("resolve_outputs", request.query_params.get("resolve_outputs"), default=True)
    outputs = await heat.outputs(ctx, stack) if resolve and stack.deleted_at is None else None
    return {"stack": stack_detail(_base(request, project_id), stack, heat.parameters_shown(stack), outputs)}


async def _update(request: Request, project_id: str, stack_name: str, stack_id: str, ctx: RequestContext,
                  existing: bool) -> Response:
    stack = await _stack(request, ctx, project_id, stack_name, stack_id)
    if stack.deleted_at is not None:
        raise oe.EntityNotFound(entity="Stack", name=stack_name)
    body = await json_object(request)
    _refuse_template_url(body)
    rollback = body.get("disable_rollback")
    clear = body.get("clear_parameters")
    await _heat(request).update_stack(
        ctx, stack.id, template=body.get("template"), parameters=_mapping(body, "parameters"),
        files=_mapping(body, "files"), environment=body.get("environment"), existing=existing,
        disable_rollback=None if rollback is None else _flag("disable_rollback", rollback),
        timeout_mins=_timeout(body.get("timeout_mins")), tags=None if body.get("tags") is None else
        _tags(body.get("tags")), clear_parameters=clear if isinstance(clear, list) else None)
    return Response(status_code=202)


@router.put("/{project_id}/stacks/{stack_name}/{stack_id}", status_code=202, openapi_extra=UPDATE_BODY)
async def update_stack(request: Request, project_id: str, stack_name: str, stack_id: str,
                       ctx: RequestContext = Depends(caller)) -> Response:
    return await _update(request, project_id, stack_name, stack_id, ctx, existing=False)


@router.patch("/{project_id}/stacks/{stack_name}/{stack_id}", status_code=202, openapi_extra=UPDATE_BODY)
async def patch_stack(request: Request, project_id: str, stack_name: str, stack_id: str,
                      ctx: RequestContext = Depends(caller)) -> Response:
    return await _update(request, project_id, stack_name, stack_id, ctx, existing=True)


@router.delete("/{project_id}/stacks/{stack_name}/{stack_id}", status_code=204)
async def delete_stack(request: Request, project_id: str, stack_name: str, stack_id: str,
                       ctx: RequestContext = Depends(caller)) -> Response:
    stack = await _stack(request, ctx, project_id, stack_name, stack_id)
    if stack.deleted_at is not None:
        raise oe.EntityNotFound(entity="Stack", name=stack_name)
    await _heat(request).delete_stack(ctx, stack.id)
    return Response(status_code=204)


@router.get("/{project_id}/stacks/{stack_name}/{stack_id}/template")
async def stack_template(request: Request, project_id: str, stack_name: str, stack_id: str,
                         ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    return (await _stack(request, ctx, project_id, stack_name, stack_id)).template


@router.get("/{project_id}/stacks/{stack_name}/{stack_id}/outputs")
async def list_outputs(request: Request, project_id: str, stack_name: str, stack_id: str,
                       ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    stack = await _stack(request, ctx, project_id, stack_name, stack_id)
    outputs = await _heat(request).outputs(ctx, stack)
    return {"outputs": [{"output_key": o["output_key"], "description": o["description"]} for o in outputs]}


@router.get("/{project_id}/stacks/{stack_name}/{stack_id}/outputs/{output_key}")
async def show_output(request: Request, project_id: str, stack_name: str, stack_id: str, output_key: str,
                      ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    stack = await _stack(request, ctx, project_id, stack_name, stack_id)
    for output in await _heat(request).outputs(ctx, stack):
        if output["output_key"] == output_key:
            return {"output": output}
    raise oe.EntityNotFound(entity="Output", name=output_key)


# -- resources and events --------------------------------------------------------------------


@router.get("/{project_id}/stacks/{stack_name}/{stack_id}/resources")
async def list_resources(request: Request, project_id: str, stack_name: str, stack_id: str,
                         ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    stack = await _stack(request, ctx, project_id, stack_name, stack_id)
    depth = _limit(request.query_params.get("nested_depth", "0"))
    base = _base(request, project_id)
    shown: list[dict[str, Any]] = []
    level = [stack]
    for _ in range(depth + 1):  # heat's nested_depth: the stack's own resources, then those of its nested stacks
        below = []
        for current in level:
            required_by = _heat(request).required_by(current)
            for resource in await _heat(request).resources(current):
                shown.append(resource_view(base, current, resource, required_by.get(resource.name, [])))
            below += await _heat(request).list_stacks(ctx, nested=True, parent_id=current.id)
        level = below
    return {"resources": shown}


@router.get("/{project_id}/stacks/{stack_name}/{stack_id}/resources/{resource_name}")
async def show_resource(request: Request, project_id: str, stack_name: str, stack_id: str, resource_name: str,
                        ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    stack = await _stack(request, ctx, project_id, stack_name, stack_id)
    heat = _heat(request)
    resource = await heat.resource(stack, resource_name)
    attributes = await heat.attributes(ctx, resource)
    return {"resource": resource_view(_base(request, project_id), stack, resource,
                                      heat.required_by(stack).get(resource.name, []), attributes)}


@router.get("/{project_id}/stacks/{stack_name}/{stack_id}/events", openapi_extra=EVENTS_QUERY)
async def list_events(request: Request, project_id: str, stack_name: str, stack_id: str,
                      ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    stack = await _stack(request, ctx, project_id, stack_name, stack_id)
    return await _events(request, ctx, project_id, stack, request.query_params.get("resource_name"))


@router.get("/{project_id}/stacks/{stack_name}/{stack_id}/resources/{resource_name}/events",
            openapi_extra=EVENTS_QUERY)
async def list_resource_events(request: Request, project_id: str, stack_name: str, stack_id: str,
                               resource_name: str, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    stack = await _stack(request, ctx, project_id, stack_name, stack_id)
    await _heat(request).resource(stack, resource_name)
    return await _events(request, ctx, project_id, stack, resource_name)


async def _events(request: Request, ctx: RequestContext, project_id: str, stack: Stack,
                  resource_name: str | None) -> dict[str, Any]:
    query = request.query_params
    events = await _heat(request).events(stack, resource_name=resource_name)
    for key in ("resource_status", "resource_action"):
        if query.get(key):
            wanted = {value.upper() for value in query.getlist(key)}
            attribute = key if key == "resource_action" else "resource_status"
            events = [event for event in events if getattr(event, attribute) in wanted]
    descending = query.get("sort_dir", "asc") == "desc"
    if descending:
        events.reverse()
    if query.get("marker"):
        ids = [event.id for event in events]
        if query["marker"] not in ids:
            raise oe.EntityNotFound(entity="Event", name=query["marker"])
        events = events[ids.index(query["marker"]) + 1:]
    if query.get("limit"):
        events = events[:_limit(query["limit"])]
    base = _base(request, project_id)
    return {"events": [event_view(base, stack, event) for event in events]}


# -- reading a body ----------------------------------------------------------------------------


def _refuse_template_url(body: dict[str, Any]) -> None:
    if body.get("template_url") and body.get("template") is None:
        raise oe.NotSupported(feature="template_url (Tether fetches nothing; send the template itself)")


def _mapping(body: dict[str, Any], key: str) -> dict[str, Any]:
    value = body.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise oe.OrchestrationBadRequest(reason=f"The '{key}' parameter must be a JSON object.")
    return value


def _timeout(value: Any) -> int | None:
    if value is None or value == "":
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        raise oe.OrchestrationBadRequest(reason="Only integer is acceptable by 'timeout_mins'.") from None


def _tags(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [tag.strip() for tag in value.split(",") if tag.strip()]
    if isinstance(value, list) and all(isinstance(tag, str) for tag in value):
        return value
    raise oe.OrchestrationBadRequest(reason="The 'tags' parameter must be a comma-separated string.")


def _limit(value: str) -> int:
    try:
        limit = int(value)
    except ValueError:
        raise oe.OrchestrationBadRequest(reason="Only integer is acceptable by 'limit'.") from None
    if limit < 0:
        raise oe.OrchestrationBadRequest(reason="Value must be >= 0 for field 'limit'.")
    return limit


def _flag(name: str, value: Any, default: bool = False) -> bool:
    """heat's extract_bool: true or false, and nothing else."""
    if value is None:
        return default
    try:
        return bool(bool_from_string(value, strict=True))
    except ValueError:
        raise oe.OrchestrationBadRequest(reason=f"Only 'true' and 'false' are acceptable by {name}") from None
