"""Glance's API (/image/v2): images, their data, members and actions, and their schemas."""

from __future__ import annotations

from typing import Any

from fastapi import Depends

from tether.api import paths
from tether.api.deps import caller
from tether.api.image import actions, data, images, members, metadefs, schemas, tags, tasks
from tether.services.context import RequestContext

schemas_router = paths.router("image")


@schemas_router.get("/schemas/image")
async def image_schema(ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    return schemas.image_schema()


@schemas_router.get("/schemas/images")
async def images_schema(ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    return schemas.images_schema()


@schemas_router.get("/schemas/member")
async def member_schema(ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    return schemas.member_schema()


@schemas_router.get("/schemas/members")
async def members_schema(ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    return schemas.members_schema()


ROUTERS = (images.router, data.router, members.router, actions.router, tags.router, metadefs.router, tasks.router,
           schemas_router)
