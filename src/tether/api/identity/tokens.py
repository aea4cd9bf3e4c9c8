"""Keystone v3: discovery, tokens, and what a token may reach (/v3/auth/projects, domains, catalog, system)."""

from __future__ import annotations

from typing import Any

from fastapi import Depends, Request, Response
from fastapi.responses import JSONResponse

from tether import logs
from tether.api import discovery, openapi, paths
from tether.api.deps import caller, cloud, json_object
from tether.api.identity.common import base_url, listing, v3
from tether.api.identity.projects import domain_view, project_view
from tether.domain.errors import identity as ie
from tether.services.context import RequestContext

router = paths.router("identity")


_NAMED: openapi.Schema = openapi.obj({"id": openapi.STRING, "name": openapi.STRING,
                                      "domain": openapi.obj({"id": openapi.STRING, "name": openapi.STRING})},
                                     closed=False)
# keystone's password-method auth request, with a project or system scope.
AUTH_SCHEMA = openapi.obj({"auth": openapi.obj({
    "identity": openapi.obj({
        "methods": {"type": "array", "items": {"type": "string"}},
        "token": openapi.obj({"id": openapi.STRING}, ["id"], closed=False),
        "password": openapi.obj({"user": openapi.obj({**_NAMED["properties"], "password": openapi.STRING},
                                                     closed=False)}, ["user"], closed=False),
    }, ["methods"], closed=False),
    "scope": {"anyOf": [openapi.obj({"project": _NAMED}, ["project"], closed=False),
                        openapi.obj({"domain": openapi.obj({"id": openapi.STRING, "name": openapi.STRING})},
                                    ["domain"], closed=False),
                        openapi.obj({"system": openapi.obj({"all": {"type": "boolean"}})}, ["system"], closed=False),
                        {"type": "string", "enum": ["unscoped"]}]},
}, ["identity"], closed=False)}, ["auth"], closed=False)
# the auth methods Tether enables; keystone answers any other (oauth1, totp, mapped, ...) with a 401
_METHODS = ("password", "token", "application_credential")
_SUBJECT = openapi.extra(params=[openapi.header("X-Subject-Token", openapi.STRING, required=True),
                                 *openapi.query({"nocatalog": openapi.STRING})])


@router.get("", include_in_schema=False)
@router.get("/")
async def versions(request: Request) -> JSONResponse:
    return JSONResponse({"versions": {"values": [discovery.identity_v3(base_url(request))]}}, status_code=300)


@router.get("/v3")
@router.get("/v3/", include_in_schema=False)
async def version(request: Request) -> dict[str, Any]:
    return {"version": discovery.identity_v3(base_url(request))}


def _text(value: Any, where: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise ie.ValidationError(reason=f"Invalid input for field '{where}': expected a non-empty string.")
    return value


def _credentials(auth: dict[str, Any]) -> dict[str, Any]:
    identity = auth.get("identity")
    if not isinstance(identity, dict) or identity.get("methods") != ["password"] or not isinstance(
            identity.get("password"), dict):
        raise ie.ValidationError(reason="Expecting to find identity.methods ['password'] and identity.password "
                                        "in auth - the server could not comply with the request since it is either "
                                        "malformed or otherwise incorrect. The client is assumed to be in error.")
    user = identity["password"].get("user")
    if not isinstance(user, dict) or not isinstance(user.get("password"), str):
        raise ie.ValidationError(reason="Expecting to find user and password in password.")
    domain = user.get("domain") if isinstance(user.get("domain"), dict) else {}
    return {
        "password": user["password"], "user_id": _text(user.get("id"), "user.id"),
        "user_name": _text(user.get("name"), "user.name"), "user_domain_id": _text(domain.get("id"), "domain.id"),
        "user_domain_name": _text(domain.get("name"), "domain.name"),
    }


def _application_credential(identity: dict[str, Any]) -> dict[str, Any]:
    credential = identity.get("application_credential")
    if not isinstance(credential, dict) or not isinstance(credential.get("secret"), str):
        raise ie.ValidationError(reason="Expecting to find secret in application_credential.")
    user = credential.get("user") if isinstance(credential.get("user"), dict) else {}
    domain = user.get("domain") if isinstance(user.get("domain"), dict) else {}
    return {"secret": credential["secret"], "id": _text(credential.get("id"), "application_credential.id"),
            "name": _text(credential.get("name"), "application_credential.name"),
            "user_id": _text(user.get("id"), "user.id"), "user_name": _text(user.get("name"), "user.name"),
            "user_domain_id": _text(domain.get("id"), "domain.id"),
            "user_domain_name": _text(domain.get("name"), "domain.name")}


def _token_id(identity: dict[str, Any]) -> str:
    """The ``token`` method's token: keystone's re-scoping."""
    token = identity.get("token")
    token_id = _text(token.get("id"), "token.id") if isinstance(token, dict) else None
    if token_id is None:
        raise ie.MissingAttribute(attribute="id", target="token")
    return token_id


def _scope(auth: dict[str, Any]) -> dict[str, Any]:
    scope = auth.get("scope")
    if scope == "unscoped":
        return {"unscoped": True}  # not even the user's default project
    if scope is None:
        return {}
    if not isinstance(scope, dict):
        raise ie.ValidationError(reason="Invalid input for field 'scope'.")
    if "system" in scope:
        if scope["system"] != {"all": True}:
            raise ie.ValidationError(reason="Invalid input for field 'scope.system'.")
        return {"system": True}
    if "domain" in scope:
        domain = scope["domain"]
        if not isinstance(domain, dict):
            raise ie.ValidationError(reason="Invalid input for field 'scope.domain'.")
        return {"domain_id": _text(domain.get("id"), "domain.id"), "domain_name": _text(domain.get("name"),
                                                                                        "domain.name")}
    project = scope.get("project")
    if not isinstance(project, dict):
        raise ie.ValidationError(reason="Only project, domain and system scopes are supported.")
    domain = project.get("domain") if isinstance(project.get("domain"), dict) else {}
    return {"project_id": _text(project.get("id"), "project.id"),
            "project_name": _text(project.get("name"), "project.name"),
            "project_domain_id": _text(domain.get("id"), "project.domain.id"),
            "project_domain_name": _text(domain.get("name"), "project.domain.name")}


async def _catalog(request: Request, token: Any) -> list[dict[str, Any]] | None:
    if "nocatalog" in request.query_params or token.is_unscoped:
        return None
    return await cloud(request).identity.catalog(token.project_id)


@router.post("/v3/auth/tokens", status_code=201,
             openapi_extra=openapi.extra(openapi.json_body(AUTH_SCHEMA), openapi.query({"nocatalog": openapi.STRING})))
async def issue_token(request: Request) -> JSONResponse:
    body = await json_object(request, "auth")
    identity = body.get("identity")
    methods = identity.get("methods") if isinstance(identity, dict) else None
    if isinstance(methods, list) and any(m not in _METHODS for m in methods):
        raise ie.AuthMethodNotSupported()
    if methods == ["application_credential"]:
        if "scope" in body:
            raise ie.ApplicationCredentialAuthError(detail="Application credentials cannot request a scope.")
        token = await cloud(request).identity.application_credentials.authenticate(
            **_application_credential(identity))
    elif methods == ["token"]:
        token = await cloud(request).identity.rescope(token_id=_token_id(identity), **_scope(body))
    else:
        token = await cloud(request).identity.authenticate(**_credentials(body), **_scope(body))
    logs.caller_known(token.user_id, token.project_id)
    payload = cloud(request).identity.token_body(token, await _catalog(request, token))
    return JSONResponse(payload, status_code=201, headers={"X-Subject-Token": token.id})


async def _subject(request: Request, ctx: RequestContext) -> Any:
    subject = request.headers.get("x-subject-token")
    if not subject:
        raise ie.ValidationError(reason="X-Subject-Token is required.")
    try:
        token = await cloud(request).identity.validate_token(subject)
    except ie.Unauthorized:
        raise ie.NotFound(target="token", id=subject[:8] + "...") from None
    if token.user_id != ctx.user_id and not (ctx.is_admin or "service" in ctx.roles):
        raise ie.Forbidden(action="identity:validate_token")
    return token


@router.get("/v3/auth/tokens", openapi_extra=_SUBJECT)
async def validate_token(request: Request, ctx: RequestContext = Depends(caller)) -> JSONResponse:
    token = await _subject(request, ctx)
    return JSONResponse(cloud(request).identity.token_body(token, await _catalog(request, token)),
                        headers={"X-Subject-Token": token.id})


@router.head("/v3/auth/tokens", status_code=200, openapi_extra=_SUBJECT)
async def check_token(request: Request, ctx: RequestContext = Depends(caller)) -> Response:
    await _subject(request, ctx)
    return Response(status_code=200)


@router.delete("/v3/auth/tokens", status_code=204, openapi_extra=_SUBJECT)
async def revoke_token(request: Request, ctx: RequestContext = Depends(caller)) -> Response:
    token = await _subject(request, ctx)
    await cloud(request).identity.revoke_token(token.id)
    return Response(status_code=204)


# -- what the caller's token may reach ----------------------------------------------------------------


@router.get("/v3/auth/projects")
async def auth_projects(request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    identity = cloud(request).identity
    ids = await identity.assignments.targets_of(ctx.user_id, "project")
    projects = await identity.list_projects(ids=ids, enabled=True) if ids else []
    return listing(request, "projects", [project_view(request, p) for p in projects])


@router.get("/v3/auth/domains")
async def auth_domains(request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    identity = cloud(request).identity
    ids = set(await identity.assignments.targets_of(ctx.user_id, "domain"))
    domains = [d for d in await identity.list_domains(enabled=True) if d.id in ids]
    return listing(request, "domains", [domain_view(request, d) for d in domains])


@router.get("/v3/auth/catalog")
async def auth_catalog(request: Request) -> dict[str, Any]:
    token = await cloud(request).identity.validate_token(request.headers.get("x-auth-token") or "")
    if token.is_unscoped:
        raise ie.Unauthorized()
    return {"catalog": await cloud(request).identity.catalog(token.project_id),
            "links": {"self": f"{v3(request)}/auth/catalog", "previous": None, "next": None}}


@router.get("/v3/auth/system")
async def auth_system(request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    identity = cloud(request).identity
    grants = await identity.assignments.list(actor=None, target=None, effective=True)
    held = any(g.user_id == ctx.user_id and g.system for g in grants)
    return {"system": [{"all": True}] if held else [],
            "links": {"self": f"{v3(request)}/auth/system", "previous": None, "next": None}}
