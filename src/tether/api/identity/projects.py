"""Keystone's projects and domains."""

from __future__ import annotations

from typing import Any

from fastapi import Depends, Request, Response

from tether.api import openapi, paths
from tether.api.deps import caller, cloud, json_object
from tether.api.identity.common import (
    BOOLEAN,
    DESCRIPTION,
    NULLABLE_ID,
    SHORT_NAME,
    TAGS,
    body_doc,
    flag,
    links,
    listing,
    require_admin,
    require_reader,
    resource_body,
    schema,
    validated,
)
from tether.domain.errors import identity as ie
from tether.domain.identity import Domain, Project
from tether.services.context import RequestContext

router = paths.router("identity")

_PROJECT_FIELDS = {"name": SHORT_NAME, "description": DESCRIPTION, "enabled": BOOLEAN, "domain_id": NULLABLE_ID,
                   "parent_id": NULLABLE_ID, "is_domain": BOOLEAN, "tags": TAGS}
PROJECT_CREATE = schema(_PROJECT_FIELDS, ["name"])
PROJECT_UPDATE = schema({key: value for key, value in _PROJECT_FIELDS.items() if key != "parent_id"})
_DOMAIN_FIELDS = {"name": SHORT_NAME, "description": DESCRIPTION, "enabled": BOOLEAN}
DOMAIN_CREATE = schema(_DOMAIN_FIELDS, ["name"])
DOMAIN_UPDATE = schema(_DOMAIN_FIELDS)
_KNOWN = set(_PROJECT_FIELDS) | {"id", "links"}


def project_view(request: Request, project: Project) -> dict[str, Any]:
    return {**project.extra, "id": project.id, "name": project.name, "domain_id": project.domain_id,
            "description": project.description, "enabled": project.enabled,
            "parent_id": project.parent_id or project.domain_id, "is_domain": False, "tags": list(project.tags),
            "options": {}, "links": links(request, "projects", project.id)}


def domain_view(request: Request, domain: Domain) -> dict[str, Any]:
    return {"id": domain.id, "name": domain.name, "description": domain.description, "enabled": domain.enabled,
            "tags": [], "options": {}, "links": links(request, "domains", domain.id)}


def _refuse_is_domain(body: dict[str, Any]) -> None:
    if body.get("is_domain"):
        raise ie.ValidationError(reason="Tether does not implement projects that act as domains (is_domain true).")


# -- projects -----------------------------------------------------------------------------------------


@router.post("/v3/projects", status_code=201,
    openapi_extra=body_doc("project", PROJECT_CREATE))
async def create_project(request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    require_admin(ctx, "create_project")
    body = await resource_body(request, "project", PROJECT_CREATE)
    _refuse_is_domain(body)
    identity = cloud(request).identity
    parent_id = body.get("parent_id")
    domain_id = body.get("domain_id")
    if parent_id is not None and await _is_domain(request, parent_id):
        # keystone takes a domain as the parent of a top-level project
        domain_id, parent_id = domain_id or parent_id, None
    project = await identity.create_project(
        name=body["name"], domain_id=domain_id or ctx.domain_id, description=body.get("description") or "",
        enabled=body.get("enabled", True), parent_id=parent_id, tags=body.get("tags"),
        extra={key: value for key, value in body.items() if key not in _KNOWN})
    return {"project": project_view(request, project)}


async def _is_domain(request: Request, id: str) -> bool:
    try:
        await cloud(request).identity.get_domain(id)
    except ie.NotFound:
        return False
    return True


@router.get("/v3/projects")
async def list_projects(request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    query = request.query_params
    require_reader(ctx, "list_projects", domain_id=query.get("domain_id") or ctx.domain_id)
    projects = await cloud(request).identity.list_projects(
        domain_id=query.get("domain_id") or (None if ctx.is_admin or ctx.system else ctx.domain_id),
        name=query.get("name"), enabled=flag(request, "enabled"), parent_id=query.get("parent_id"))
    tags = [tag for tag in query.get("tags", "").split(",") if tag]
    any_tags = [tag for tag in query.get("tags-any", "").split(",") if tag]
    projects = [p for p in projects if set(tags) <= set(p.tags) and (not any_tags or set(any_tags) & set(p.tags))]
    if query.get("is_domain") in ("true", "True", "1"):
        projects = []
    return listing(request, "projects", [project_view(request, p) for p in projects])


@router.get("/v3/projects/{project_id}")
async def get_project(project_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    project = await cloud(request).identity.get_project(project_id)
    require_reader(ctx, "get_project", domain_id=project.domain_id, own=ctx.project_id == project_id)
    return {"project": project_view(request, project)}


@router.patch("/v3/projects/{project_id}",
    openapi_extra=body_doc("project", PROJECT_UPDATE))
async def update_project(project_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    require_admin(ctx, "update_project")
    body = await resource_body(request, "project", PROJECT_UPDATE)
    identity = cloud(request).identity
    project = await identity.get_project(project_id)
    if "domain_id" in body and body["domain_id"] != project.domain_id:
        raise ie.ValidationError(reason="Update of `domain_id` is not allowed.")
    if body.get("is_domain"):
        raise ie.ValidationError(reason="Update of `is_domain` is not allowed.")
    project = await identity.update_project(
        project_id, name=body.get("name"), description=body.get("description"), enabled=body.get("enabled"),
        tags=body.get("tags"), extra={key: value for key, value in body.items() if key not in _KNOWN})
    return {"project": project_view(request, project)}


@router.delete("/v3/projects/{project_id}", status_code=204)
async def delete_project(project_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> Response:
    require_admin(ctx, "delete_project")
    await cloud(request).identity.accounts.delete_project(project_id)
    return Response(status_code=204)


# project tags


@router.get("/v3/projects/{project_id}/tags")
async def list_tags(project_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    project = await cloud(request).identity.get_project(project_id)
    require_reader(ctx, "list_project_tags", domain_id=project.domain_id, own=ctx.project_id == project_id)
    return {"tags": list(project.tags)}


@router.put("/v3/projects/{project_id}/tags",
    openapi_extra=openapi.extra(openapi.json_body(schema({"tags": TAGS}, ["tags"]))))
async def replace_tags(project_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    require_admin(ctx, "update_project_tags")
    body = validated(await json_object(request), schema({"tags": TAGS}, ["tags"]))
    project = await cloud(request).identity.update_project(project_id, tags=body["tags"])
    return {"tags": list(project.tags)}


@router.get("/v3/projects/{project_id}/tags/{tag}", status_code=204)
async def check_tag(project_id: str, tag: str, request: Request, ctx: RequestContext = Depends(caller)) -> Response:
    project = await cloud(request).identity.get_project(project_id)
    require_reader(ctx, "get_project_tag", domain_id=project.domain_id, own=ctx.project_id == project_id)
    if tag not in project.tags:
        raise ie.NotFound(target="project tag", id=tag)
    return Response(status_code=204)


@router.put("/v3/projects/{project_id}/tags/{tag}", status_code=201)
async def add_tag(project_id: str, tag: str, request: Request, ctx: RequestContext = Depends(caller)) -> Response:
    require_admin(ctx, "create_project_tag")
    identity = cloud(request).identity
    project = await identity.get_project(project_id)
    if tag not in project.tags:
        await identity.update_project(project_id, tags=[*project.tags, tag])
    return Response(status_code=201, headers={"Location": f"{request.url}"})


@router.delete("/v3/projects/{project_id}/tags/{tag}", status_code=204)
async def delete_tag(project_id: str, tag: str, request: Request, ctx: RequestContext = Depends(caller)) -> Response:
    require_admin(ctx, "delete_project_tag")
    identity = cloud(request).identity
    project = await identity.get_project(project_id)
    if tag not in project.tags:
        raise ie.NotFound(target="project tag", id=tag)
    await identity.update_project(project_id, tags=[t for t in project.tags if t != tag])
    return Response(status_code=204)


@router.delete("/v3/projects/{project_id}/tags", status_code=204)
async def clear_tags(project_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> Response:
    require_admin(ctx, "delete_project_tags")
    await cloud(request).identity.update_project(project_id, tags=[])
    return Response(status_code=204)


# -- domains ------------------------------------------------------------------------------------------


@router.post("/v3/domains", status_code=201,
    openapi_extra=body_doc("domain", DOMAIN_CREATE))
async def create_domain(request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    require_admin(ctx, "create_domain")
    body = await resource_body(request, "domain", DOMAIN_CREATE)
    domain = await cloud(request).identity.create_domain(name=body["name"], description=body.get("description") or "",
                                                         enabled=body.get("enabled", True))
    return {"domain": domain_view(request, domain)}


@router.get("/v3/domains")
async def list_domains(request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    require_reader(ctx, "list_domains")
    domains = await cloud(request).identity.list_domains(name=request.query_params.get("name"),
                                                         enabled=flag(request, "enabled"))
    return listing(request, "domains", [domain_view(request, d) for d in domains])


@router.get("/v3/domains/{domain_id}")
async def get_domain(domain_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    domain = await cloud(request).identity.get_domain(domain_id)
    owns = ctx.domain_id == domain_id
    if not owns and ctx.project_id is not None:
        owns = (await cloud(request).identity.get_project(ctx.project_id)).domain_id == domain_id
    require_reader(ctx, "get_domain", own=owns)
    return {"domain": domain_view(request, domain)}


@router.patch("/v3/domains/{domain_id}",
    openapi_extra=body_doc("domain", DOMAIN_UPDATE))
async def update_domain(domain_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    require_admin(ctx, "update_domain")
    body = await resource_body(request, "domain", DOMAIN_UPDATE)
    domain = await cloud(request).identity.accounts.update_domain(
        domain_id, name=body.get("name"), description=body.get("description"), enabled=body.get("enabled"))
    return {"domain": domain_view(request, domain)}


@router.delete("/v3/domains/{domain_id}", status_code=204)
async def delete_domain(domain_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> Response:
    require_admin(ctx, "delete_domain")
    await cloud(request).identity.accounts.delete_domain(domain_id)
    return Response(status_code=204)
