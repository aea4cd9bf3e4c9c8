"""Glance's API (/image/v2): image records and their schemas."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends

from tether.api.deps import caller
from tether.api.image import images, schemas, tags
from tether.services.context import RequestContext

router = APIRouter(prefix="/image/v2", tags=["image"])
router.include_router(images.router)
router.include_router(tags.router)


@router.get("/schemas/image")
async def image_schema(ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    return schemas.image_schema()


@router.get("/schemas/images")
async def images_schema(ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    return schemas.images_schema()


__all__ = ["router"]
