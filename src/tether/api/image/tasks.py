"""``/v2/tasks``: glance's (admin-only) asynchronous tasks, as its ``tasks.py`` answers them."""

from __future__ import annotations

import urllib.parse
from typing import Any

from fastapi import Depends, Request, Response
from fastapi.responses import JSONResponse

from tether.api import openapi, paging, paths
from tether.api.deps import caller, cloud
from tether.api.envelopes import error_body
from tether.api.image import listing
from tether.api.image.bodies import request_body
from tether.api.image.views import isotime
from tether.domain import image_tasks as rules
from tether.domain.errors.image import ImageBadRequest
from tether.domain.image_tasks import ImageTask
from tether.services.context import RequestContext
from tether.services.image.tasks import ImageTasks

router = paths.router("image")

SORT_KEYS = ("created_at", "updated_at", "id", "type", "status", "owner", "expires_at")
_DETAIL = ("input", "result", "message")
_TASK_REQUEST = openapi.obj({"type": {"type": "string", "enum": list(rules.TYPES)},
                             "input": {"type": "object"}}, ["type", "input"])
_LIST_QUERY = openapi.extra(params=openapi.query({
    "limit": openapi.LIMIT, "marker": openapi.STRING, "sort_key": {"type": "string", "enum": list(SORT_KEYS)},
    "sort_dir": openapi.SORT_DIR, "status": {"type": "string", "enum": list(rules.STATUSES)},
    "type": {"type": "string", "enum": list(rules.TYPES)},
}))


def _tasks(request: Request) -> ImageTasks:
    return cloud(request).image.tasks


def task_view(task: ImageTask, *, detail: bool = True) -> dict[str, Any]:
    view: dict[str, Any] = {
        "id": task.id, "type": task.type, "status": task.status, "owner": task.owner,
        "created_at": isotime(task.created_at), "updated_at": isotime(task.updated_at),
        "self": f"/v2/tasks/{task.id}", "schema": "/v2/schemas/task",
    }
    if task.expires_at is not None:
        view["expires_at"] = isotime(task.expires_at)
    if detail:
        view.update(input=task.input, result=task.result, message=task.message)
    return view


@router.post("/tasks", status_code=201, openapi_extra=openapi.extra(openapi.json_body(_TASK_REQUEST)))
async def create_task(request: Request, ctx: RequestContext = Depends(caller)) -> JSONResponse:
    task = await _tasks(request).create(ctx, await request_body(request))
    return JSONResponse(task_view(task), status_code=201, headers={"Location": f"/v2/tasks/{task.id}"})


@router.get("/tasks", openapi_extra=_LIST_QUERY)
async def list_tasks(request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    params = request.query_params
    sort_key, sort_dir = params.get("sort_key", "created_at"), params.get("sort_dir", "desc")
    status, kind = params.get("status"), params.get("type")
    rules.check_filters(status, kind, sort_dir)
    if sort_key not in SORT_KEYS:
        raise ImageBadRequest(reason=f"Invalid sort key: {sort_key}. It must be one of the following: "
                                     f"{', '.join(SORT_KEYS)}.")
    limit = min(listing.limit_param(params.get("limit")), listing.MAX_LIMIT)
    tasks = await _tasks(request).list(ctx)
    filters = {name: [value] for name, value in (("status", status), ("type", kind)) if value}
    ascending = sort_dir == "asc"
    query = paging.ListQuery(filters=filters, limit=limit, marker=params.get("marker"),
                             sort=(paging.SortKey(sort_key, ascending), paging.SortKey("id", ascending)))
    marker = None
    if query.marker is not None:
        marker = paging.find(tasks, query.marker, lambda task: task.id)
        if marker is None:
            raise ImageBadRequest(reason=f"Invalid marker. Task {query.marker} could not be found.")
    shown = paging.page(tasks, query, marker=marker)
    kept = {name: value for name, value in params.items() if name != "marker"}
    body: dict[str, Any] = {"tasks": [task_view(task, detail=False) for task in shown],
                            "first": f"/v2/tasks?{urllib.parse.urlencode(kept)}" if kept else "/v2/tasks",
                            "schema": "/v2/schemas/tasks"}
    if shown and len(shown) == limit:
        body["next"] = f"/v2/tasks?{urllib.parse.urlencode({**kept, 'marker': shown[-1].id})}"
    return body


@router.get("/tasks/{task_id}")
async def show_task(task_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    return task_view(await _tasks(request).get(ctx, task_id))


@router.delete("/tasks/{task_id}")
async def delete_task(task_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> Response:
    message = ("This operation is currently not permitted on Glance Tasks. They are auto deleted after reaching "
               "the time based on their expires_at property.")
    return JSONResponse(error_body("image", 405, message), status_code=405, headers={"Allow": "GET"})


def task_schema() -> dict[str, Any]:
    text = {"type": "string"}
    return {"name": "task", "additionalProperties": False, "properties": {
        "id": {"type": "string", "pattern": "^([0-9a-fA-F]){8}-([0-9a-fA-F]){4}-([0-9a-fA-F]){4}-([0-9a-fA-F]){4}"
                                           "-([0-9a-fA-F]){12}$"},
        "type": {"type": "string", "enum": list(rules.TYPES)},
        "status": {"type": "string", "enum": list(rules.STATUSES)},
        "input": {"type": "object"}, "result": {"type": ["null", "object"]}, "owner": text, "message": text,
        "expires_at": {"type": ["null", "string"]}, "created_at": text, "updated_at": text, "self": text,
        "schema": text,
    }}


def tasks_schema() -> dict[str, Any]:
    item = task_schema()
    item["properties"] = {name: spec for name, spec in item["properties"].items() if name not in _DETAIL}
    return {"name": "tasks", "properties": {"tasks": {"type": "array", "items": item},
                                            "schema": {"type": "string"}, "first": {"type": "string"},
                                            "next": {"type": "string"}},
            "links": [{"rel": "first", "href": "{first}"}, {"rel": "next", "href": "{next}"},
                      {"rel": "describedby", "href": "{schema}"}]}


@router.get("/schemas/task")
async def show_task_schema(ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    return task_schema()


@router.get("/schemas/tasks")
async def show_tasks_schema(ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    return tasks_schema()
