"""Keystone's users and groups, a user's own projects and groups, and the password change."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from fastapi import Depends, Request, Response

from tether.api import paths
from tether.api.deps import caller, cloud
from tether.api.identity.common import (
    BOOLEAN,
    DESCRIPTION,
    NAME,
    NO_BODY,
    NULLABLE_ID,
    NULLABLE_STRING,
    SHORT_NAME,
    body_doc,
    flag,
    links,
    listing,
    require_admin,
    require_reader,
    resource_body,
    schema,
)
from tether.api.identity.projects import project_view
from tether.domain.errors import identity as ie
from tether.domain.identity import Group, User
from tether.services.context import RequestContext
from tether.services.identity.token_format import isotime

router = paths.router("identity")

_USER_FIELDS = {"name": NAME, "password": NULLABLE_STRING, "enabled": BOOLEAN, "domain_id": NULLABLE_ID,
                "default_project_id": NULLABLE_ID, "description": DESCRIPTION}
USER_CREATE = schema(_USER_FIELDS, ["name"])
USER_UPDATE = schema(_USER_FIELDS)
PASSWORD_CHANGE = schema({"password": {"type": "string"}, "original_password": {"type": "string"}},
                         ["password", "original_password"])
_GROUP_FIELDS = {"name": SHORT_NAME, "description": DESCRIPTION, "domain_id": NULLABLE_ID}
GROUP_CREATE = schema(_GROUP_FIELDS, ["name"])
GROUP_UPDATE = schema(_GROUP_FIELDS)
_KNOWN = set(_USER_FIELDS) | {"id", "links", "options", "password_expires_at"}


def user_view(request: Request, user: User) -> dict[str, Any]:
    view = {**user.extra, "id": user.id, "name": user.name, "domain_id": user.domain_id, "enabled": user.enabled,
            "password_expires_at": None, "options": {}, "links": links(request, "users", user.id)}
    if user.default_project_id is not None:
        view["default_project_id"] = user.default_project_id
    if user.description:
        view["description"] = user.description
    return view


def group_view(request: Request, group: Group) -> dict[str, Any]:
    return {"id": group.id, "name": group.name, "domain_id": group.domain_id, "description": group.description,
            "links": links(request, "groups", group.id)}


# -- users --------------------------------------------------------------------------------------------


@router.post("/v3/users", status_code=201,
    openapi_extra=body_doc("user", USER_CREATE))
async def create_user(request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    require_admin(ctx, "create_user")
    body = await resource_body(request, "user", USER_CREATE)
    user = await cloud(request).identity.create_user(
        name=body["name"], password=body.get("password"), domain_id=body.get("domain_id") or ctx.domain_id
        or "default", enabled=body.get("enabled", True), default_project_id=body.get("default_project_id"),
        description=body.get("description") or "",
        extra={key: value for key, value in body.items() if key not in _KNOWN})
    return {"user": user_view(request, user)}


@router.get("/v3/users")
async def list_users(request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    query = request.query_params
    require_reader(ctx, "list_users", domain_id=query.get("domain_id") or ctx.domain_id)
    users = await cloud(request).identity.list_users(
        domain_id=query.get("domain_id") or (None if ctx.is_admin or ctx.system else ctx.domain_id),
        name=query.get("name"), enabled=flag(request, "enabled"))
    return listing(request, "users", [user_view(request, u) for u in users])


@router.get("/v3/users/{user_id}")
async def get_user(user_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    user = await cloud(request).identity.get_user(user_id)
    require_reader(ctx, "get_user", domain_id=user.domain_id, own=ctx.user_id == user_id)
    return {"user": user_view(request, user)}


@router.patch("/v3/users/{user_id}",
    openapi_extra=body_doc("user", USER_UPDATE))
async def update_user(user_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    require_admin(ctx, "update_user")
    body = await resource_body(request, "user", USER_UPDATE)
    identity = cloud(request).identity
    user = await identity.get_user(user_id)
    if body.get("domain_id") not in (None, user.domain_id):
        raise ie.ValidationError(reason="Update of `domain_id` is not allowed.")
    user = await identity.update_user(
        user_id, name=body.get("name"), password=body.get("password"), enabled=body.get("enabled"),
        description=body.get("description"), default_project_id=body.get("default_project_id"),
        extra={key: value for key, value in body.items() if key not in _KNOWN})
    return {"user": user_view(request, user)}


@router.delete("/v3/users/{user_id}", status_code=204)
async def delete_user(user_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> Response:
    require_admin(ctx, "delete_user")
    await cloud(request).identity.accounts.delete_user(user_id)
    return Response(status_code=204)


@router.post("/v3/users/{user_id}/password", status_code=204,
    openapi_extra=body_doc("user", PASSWORD_CHANGE))
async def change_password(user_id: str, request: Request) -> Response:
    # keystone checks no token here: the original password is the proof
    body = await resource_body(request, "user", PASSWORD_CHANGE)
    await cloud(request).identity.accounts.change_password(
        user_id, original_password=body["original_password"], password=body["password"])
    return Response(status_code=204)


@router.get("/v3/users/{user_id}/projects")
async def list_user_projects(user_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    require_reader(ctx, "list_user_projects", own=ctx.user_id == user_id)
    identity = cloud(request).identity
    await identity.get_user(user_id)
    ids = await identity.assignments.targets_of(user_id, "project")
    projects = await identity.list_projects(ids=ids, enabled=flag(request, "enabled"),
                                            name=request.query_params.get("name")) if ids else []
    return listing(request, "projects", [project_view(request, p) for p in projects])


@router.get("/v3/users/{user_id}/groups")
async def list_user_groups(user_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    require_reader(ctx, "list_groups_for_user", own=ctx.user_id == user_id)
    groups = await cloud(request).identity.groups.groups_of(user_id)
    return listing(request, "groups", [group_view(request, g) for g in groups])


# -- groups -------------------------------------------------------------------------------------------


@router.post("/v3/groups", status_code=201,
    openapi_extra=body_doc("group", GROUP_CREATE))
async def create_group(request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    require_admin(ctx, "create_group")
    body = await resource_body(request, "group", GROUP_CREATE)
    group = await cloud(request).identity.groups.create_group(
        name=body["name"], domain_id=body.get("domain_id") or ctx.domain_id or "default",
        description=body.get("description") or "")
    return {"group": group_view(request, group)}


@router.get("/v3/groups")
async def list_groups(request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    query = request.query_params
    require_reader(ctx, "list_groups", domain_id=query.get("domain_id") or ctx.domain_id)
    groups = await cloud(request).identity.groups.list_groups(domain_id=query.get("domain_id"),
                                                              name=query.get("name"))
    return listing(request, "groups", [group_view(request, g) for g in groups])


@router.get("/v3/groups/{group_id}")
async def get_group(group_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    group = await cloud(request).identity.groups.get_group(group_id)
    require_reader(ctx, "get_group", domain_id=group.domain_id)
    return {"group": group_view(request, group)}


@router.patch("/v3/groups/{group_id}",
    openapi_extra=body_doc("group", GROUP_UPDATE))
async def update_group(group_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    require_admin(ctx, "update_group")
    body = await resource_body(request, "group", GROUP_UPDATE)
    group = await cloud(request).identity.groups.update_group(group_id, name=body.get("name"),
                                                              description=body.get("description"))
    return {"group": group_view(request, group)}


@router.delete("/v3/groups/{group_id}", status_code=204)
async def delete_group(group_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> Response:
    require_admin(ctx, "delete_group")
    await cloud(request).identity.groups.delete_group(group_id)
    return Response(status_code=204)


@router.get("/v3/groups/{group_id}/users")
async def list_group_users(group_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    require_reader(ctx, "list_users_in_group")
    users = await cloud(request).identity.groups.members(group_id)
    return listing(request, "users", [user_view(request, u) for u in users])


@router.put("/v3/groups/{group_id}/users/{user_id}", status_code=204,
    openapi_extra=NO_BODY)
async def add_group_user(group_id: str, user_id: str, request: Request,
                         ctx: RequestContext = Depends(caller)) -> Response:
    require_admin(ctx, "add_user_to_group")
    await cloud(request).identity.groups.add_member(group_id, user_id)
    return Response(status_code=204)


@router.head("/v3/groups/{group_id}/users/{user_id}", status_code=204)
@router.get("/v3/groups/{group_id}/users/{user_id}", status_code=204, include_in_schema=False)
async def check_group_user(group_id: str, user_id: str, request: Request,
                           ctx: RequestContext = Depends(caller)) -> Response:
    require_reader(ctx, "check_user_in_group", own=ctx.user_id == user_id)
    await cloud(request).identity.groups.check_member(group_id, user_id)
    return Response(status_code=204)


@router.delete("/v3/groups/{group_id}/users/{user_id}", status_code=204)
async def remove_group_user(group_id: str, user_id: str, request: Request,
                            ctx: RequestContext = Depends(caller)) -> Response:
    require_admin(ctx, "remove_user_from_group")
    await cloud(request).identity.groups.remove_member(group_id, user_id)
    return Response(status_code=204)


# -- application credentials --------------------------------------------------------------------------

APP_CREDENTIAL_CREATE = schema({
    "name": NAME, "description": DESCRIPTION, "secret": NULLABLE_STRING,
    "expires_at": NULLABLE_STRING, "unrestricted": {"type": ["boolean", "null"]},
    "roles": {"type": "array", "items": {"type": "object", "properties": {"id": NAME, "name": NAME},
                                         "minProperties": 1}},
}, ["name"], open_=False)


def _app_credential_view(request: Request, credential: Any, roles: list[Any]) -> dict[str, Any]:
    return {"id": credential.id, "name": credential.name, "description": credential.description or None,
            "user_id": credential.user_id, "project_id": credential.project_id,
            # keystone answers an application credential's expiry without a zone designator
            "expires_at": isotime(credential.expires_at).rstrip("Z") if credential.expires_at is not None else None,
            "unrestricted": credential.unrestricted, "access_rules": [],
            "roles": [{"id": role.id, "name": role.name, "domain_id": None} for role in roles],
            "links": links(request, f"users/{credential.user_id}/application_credentials", credential.id)}


def _expiry(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise ie.ValidationError(reason=f"Invalid input for field 'expires_at': '{value}' is not a "
                                        "'date-time'") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


@router.post("/v3/users/{user_id}/application_credentials", status_code=201,
    openapi_extra=body_doc("application_credential", APP_CREDENTIAL_CREATE))
async def create_application_credential(user_id: str, request: Request,
                                        ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    if ctx.user_id != user_id or ctx.project_id is None:
        # keystone: only the owner, on a project-scoped token, makes one
        raise ie.Forbidden(action="identity:create_application_credential")
    body = await resource_body(request, "application_credential", APP_CREDENTIAL_CREATE)
    issued = await cloud(request).identity.application_credentials.create(
        user_id=user_id, project_id=ctx.project_id, name=body["name"], secret=body.get("secret"),
        description=body.get("description") or "", expires_at=_expiry(body.get("expires_at")),
        unrestricted=bool(body.get("unrestricted")), roles=body.get("roles"))
    view = _app_credential_view(request, issued.credential, issued.roles)
    return {"application_credential": {**view, "secret": issued.secret}}


@router.get("/v3/users/{user_id}/application_credentials")
async def list_application_credentials(user_id: str, request: Request,
                                       ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    require_reader(ctx, "list_application_credentials", own=ctx.user_id == user_id)
    service = cloud(request).identity.application_credentials
    credentials = await service.list(user_id, name=request.query_params.get("name"))
    views = [_app_credential_view(request, c, await service.roles_of(c)) for c in credentials]
    return listing(request, "application_credentials", views)


@router.get("/v3/users/{user_id}/application_credentials/{credential_id}")
async def get_application_credential(user_id: str, credential_id: str, request: Request,
                                     ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    require_reader(ctx, "get_application_credential", own=ctx.user_id == user_id)
    service = cloud(request).identity.application_credentials
    credential = await service.get(user_id, credential_id)
    return {"application_credential": _app_credential_view(request, credential, await service.roles_of(credential))}


@router.delete("/v3/users/{user_id}/application_credentials/{credential_id}", status_code=204)
async def delete_application_credential(user_id: str, credential_id: str, request: Request,
                                        ctx: RequestContext = Depends(caller)) -> Response:
    if ctx.user_id != user_id and not ctx.is_admin:
        raise ie.Forbidden(action="identity:delete_application_credential")
    await cloud(request).identity.application_credentials.delete(user_id, credential_id)
    return Response(status_code=204)
