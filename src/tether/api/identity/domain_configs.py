"""Keystone's domain-specific configuration: /v3/domains/{domain_id}/config[/{group}[/{option}]] and the
server's defaults at /v3/domains/config[/{group}[/{option}]]/default. Admins write, system readers read.

The options are kept and answered as keystone does; Tether's users live in its own database whatever
a domain's ``identity.driver`` says (an LDAP-backed domain is in the README's table)."""

from __future__ import annotations

from typing import Any

from fastapi import Depends, Request, Response
from fastapi.responses import JSONResponse

from tether.api import openapi, paths
from tether.api.deps import caller, cloud, json_object
from tether.api.identity.common import require_admin, require_reader
from tether.domain import domain_config
from tether.services.context import RequestContext

router = paths.router("identity")

_CONFIG = openapi.extra(openapi.json_body(openapi.obj({"config": openapi.obj({}, closed=False)}, ["config"],
                                                      closed=False)))
_BASE = "/v3/domains/{domain_id}/config"


async def _body(request: Request) -> Any:
    return (await json_object(request)).get("config", {})


# -- the server's defaults (declared first: "config" is not a domain id) ------------------------------


@router.get("/v3/domains/config/default")
async def default_config(ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    require_reader(ctx, "get_domain_config_default")
    return {"config": domain_config.defaults()}


@router.get("/v3/domains/config/{group}/default")
async def default_group_config(group: str, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    require_reader(ctx, "get_domain_config_default")
    return {"config": domain_config.defaults(group)}


@router.get("/v3/domains/config/{group}/{option}/default")
async def default_option_config(group: str, option: str, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    require_reader(ctx, "get_domain_config_default")
    return {"config": domain_config.defaults(group, option)}


# -- a domain's own -----------------------------------------------------------------------------------


@router.put(_BASE, status_code=201, openapi_extra=_CONFIG)
async def create_config(domain_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> JSONResponse:
    """Replaces any config the domain had: 201 when it had none, 200 when it had one."""
    require_admin(ctx, "create_domain_config")
    config, created = await cloud(request).identity.domain_configs.create(domain_id, await _body(request))
    return JSONResponse({"config": config}, status_code=201 if created else 200)


# keystone routes a domain's config, one of its groups and one option to the same handlers


async def _get(request: Request, ctx: RequestContext, domain_id: str, group: str | None = None,
               option: str | None = None) -> dict[str, Any]:
    require_reader(ctx, "get_domain_config")
    return {"config": await cloud(request).identity.domain_configs.get(domain_id, group, option)}


async def _update(request: Request, ctx: RequestContext, domain_id: str, group: str | None = None,
                  option: str | None = None) -> dict[str, Any]:
    require_admin(ctx, "update_domain_config")
    body = await _body(request)
    return {"config": await cloud(request).identity.domain_configs.update(domain_id, body, group, option)}


async def _delete(request: Request, ctx: RequestContext, domain_id: str, group: str | None = None,
                  option: str | None = None) -> Response:
    require_admin(ctx, "delete_domain_config")
    await cloud(request).identity.domain_configs.delete(domain_id, group, option)
    return Response(status_code=204)


@router.get(_BASE)
async def get_config(domain_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    return await _get(request, ctx, domain_id)


@router.get(_BASE + "/{group}")
async def get_group_config(domain_id: str, group: str, request: Request,
                           ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    return await _get(request, ctx, domain_id, group)


@router.get(_BASE + "/{group}/{option}")
async def get_option_config(domain_id: str, group: str, option: str, request: Request,
                            ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    return await _get(request, ctx, domain_id, group, option)


@router.patch(_BASE, openapi_extra=_CONFIG)
async def update_config(domain_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    return await _update(request, ctx, domain_id)


@router.patch(_BASE + "/{group}", openapi_extra=_CONFIG)
async def update_group_config(domain_id: str, group: str, request: Request,
                              ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    return await _update(request, ctx, domain_id, group)


@router.patch(_BASE + "/{group}/{option}", openapi_extra=_CONFIG)
async def update_option_config(domain_id: str, group: str, option: str, request: Request,
                               ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    return await _update(request, ctx, domain_id, group, option)


@router.delete(_BASE, status_code=204)
async def delete_config(domain_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> Response:
    return await _delete(request, ctx, domain_id)


@router.delete(_BASE + "/{group}", status_code=204)
async def delete_group_config(domain_id: str, group: str, request: Request,
                              ctx: RequestContext = Depends(caller)) -> Response:
    return await _delete(request, ctx, domain_id, group)


@router.delete(_BASE + "/{group}/{option}", status_code=204)
async def delete_option_config(domain_id: str, group: str, option: str, request: Request,
                               ctx: RequestContext = Depends(caller)) -> Response:
    return await _delete(request, ctx, domain_id, group, option)
