"""Keystone's OS-OAUTH1 consumers (/v3/OS-OAUTH1/consumers), admin-only as keystone's default policy.

The OAuth1 delegation flow (request_token, authorize, access_token, the ``oauth1`` auth method) is not
served: its routes are absent and the method is refused as an unsupported one (see the README)."""

from __future__ import annotations

from typing import Any

from fastapi import Depends, Request, Response

from tether.api import paths
from tether.api.deps import caller, cloud
from tether.api.identity.common import (
    DESCRIPTION,
    body_doc,
    listing,
    require_admin,
    require_reader,
    resource_body,
    schema,
    v3,
)
from tether.domain.errors import identity as ie
from tether.domain.identity import OAuthConsumer
from tether.services.context import RequestContext

router = paths.router("identity")

CONSUMER_CREATE = schema({"description": DESCRIPTION})
CONSUMER_UPDATE = {**schema({"description": DESCRIPTION}), "not": {"required": ["secret"]}, "minProperties": 1}
_KNOWN = {"id", "links", "description", "secret"}


def consumer_view(request: Request, consumer: OAuthConsumer) -> dict[str, Any]:
    return {**consumer.extra, "id": consumer.id, "description": consumer.description,
            "links": {"self": f"{v3(request)}/OS-OAUTH1/consumers/{consumer.id}"}}


@router.post("/v3/OS-OAUTH1/consumers", status_code=201, openapi_extra=body_doc("consumer", CONSUMER_CREATE))
async def create_consumer(request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    require_admin(ctx, "create_consumer")
    body = await resource_body(request, "consumer", CONSUMER_CREATE)
    new = await cloud(request).identity.oauth_consumers.create(
        description=body.get("description"), extra={k: v for k, v in body.items() if k not in _KNOWN})
    # the secret is shown this once
    return {"consumer": {**consumer_view(request, new.consumer), "secret": new.secret}}


@router.get("/v3/OS-OAUTH1/consumers")
async def list_consumers(request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    require_reader(ctx, "list_consumers")
    consumers = await cloud(request).identity.oauth_consumers.list()
    return listing(request, "consumers", [consumer_view(request, c) for c in consumers])


@router.get("/v3/OS-OAUTH1/consumers/{consumer_id}")
async def get_consumer(consumer_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    require_reader(ctx, "get_consumer")
    return {"consumer": consumer_view(request, await cloud(request).identity.oauth_consumers.get(consumer_id))}


@router.patch("/v3/OS-OAUTH1/consumers/{consumer_id}", openapi_extra=body_doc("consumer", CONSUMER_UPDATE))
async def update_consumer(consumer_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    require_admin(ctx, "update_consumer")
    body = await resource_body(request, "consumer", CONSUMER_UPDATE)
    if body.get("id") is not None and body["id"] != consumer_id:
        raise ie.ValidationError(reason="Cannot change ID")
    consumer = await cloud(request).identity.oauth_consumers.update(
        consumer_id, description=body.get("description"), description_given="description" in body,
        extra={k: v for k, v in body.items() if k not in _KNOWN})
    return {"consumer": consumer_view(request, consumer)}


@router.delete("/v3/OS-OAUTH1/consumers/{consumer_id}", status_code=204)
async def delete_consumer(consumer_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> Response:
    require_admin(ctx, "delete_consumer")
    await cloud(request).identity.oauth_consumers.delete(consumer_id)
    return Response(status_code=204)
