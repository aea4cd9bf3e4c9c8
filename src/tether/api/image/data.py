"""An image's data over HTTP: ``PUT``/``GET /v2/images/{id}/file``, ``PUT .../stage``, ``POST .../import``
and ``GET /v2/info/import``, as glance's ``image_data.py`` and ``images.py`` answer them.

Uploads are read from ``request.stream()`` chunk by chunk, so an image is
never held whole in memory; downloads are streamed from the file.
"""

from __future__ import annotations

import re
from typing import Any

from fastapi import Depends, Request, Response
from fastapi.responses import StreamingResponse
from starlette.requests import ClientDisconnect

from tether.api import openapi, paths
from tether.api.deps import caller, cloud
from tether.api.image.bodies import request_body
from tether.domain.errors.image import (
    ImageBadRequest,
    ImageNotFound,
    ImageUnsupportedMediaType,
    RangeNotSatisfiable,
)
from tether.services.context import RequestContext
from tether.services.image import ImageService
from tether.services.image.data import IMPORT_METHODS

router = paths.router("image")

OCTET_STREAM = "application/octet-stream"
_RANGE = re.compile(r"^bytes=(\d*)-(\d*)$")


def _images(request: Request) -> ImageService:
    return cloud(request).image


def _octet_stream(request: Request) -> None:
    content_type = request.headers.get("content-type")
    if content_type is None or content_type.split(";", 1)[0].strip().lower() != OCTET_STREAM:
        raise ImageUnsupportedMediaType(reason=f"Invalid content type {content_type}")


def _gone_client() -> Response:
    # The client went away mid-upload; the image is queued again and nobody reads this answer.
    return Response(status_code=400)


@router.put("/images/{image_id}/file", status_code=204,
              openapi_extra=openapi.extra(openapi.json_body(
                  {"type": "string", "format": "binary"}, "application/octet-stream")))
async def upload_image_data(image_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> Response:
    _octet_stream(request)
    try:
        await _images(request).data.upload(ctx, image_id, request.stream())
    except ClientDisconnect:
        return _gone_client()
    return Response(status_code=204)


@router.put("/images/{image_id}/stage", status_code=204,
              openapi_extra=openapi.extra(openapi.json_body(
                  {"type": "string", "format": "binary"}, "application/octet-stream")))
async def stage_image_data(image_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> Response:
    _octet_stream(request)
    try:
        await _images(request).data.stage(ctx, image_id, request.stream())
    except ClientDisconnect:
        return _gone_client()
    return Response(status_code=204)


@router.post("/images/{image_id}/import", status_code=202,
              openapi_extra=openapi.extra(openapi.json_body(
                  openapi.obj({"method": openapi.obj({"name": openapi.STRING}, ["name"], closed=False)}, ["method"],
                    closed=False))))
async def import_image(image_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> Response:
    body = await request_body(request)
    method = body.get("method") if isinstance(body, dict) else None
    if not isinstance(method, dict):
        raise ImageBadRequest(reason="Import request requires a 'method' field.")
    if "name" not in method:
        raise ImageBadRequest(reason="Import request requires a 'name' field.")
    for flag in ("all_stores_must_succeed", "all_stores"):
        if not isinstance(body.get(flag, True), bool):
            raise ImageBadRequest(reason=f"'{flag}' must be boolean value only")
    # One store, as glance without enabled_backends: "all stores" and any list of stores is that one
    # (glance then ignores them), but a partial success across stores cannot be asked for.
    if body.get("all_stores_must_succeed", True) is False:
        raise ImageBadRequest(reason=f"All_stores_must_succeed can only be set with enabled_backends "
                                     f"{method.get('uri')}")
    await _images(request).data.import_image(ctx, image_id, method["name"])
    return Response(status_code=202)


@router.get("/images/{image_id}/file")
async def download_image_data(image_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> Response:
    """The data (200), one range of it (206), or 204 for an image that has none, as glance answers."""
    service = _images(request)
    header = request.headers.get("range")
    span = _span(header) if header else None
    download = await service.data.download(ctx, image_id, span)
    if download is None:
        return Response(status_code=204)
    headers = {"Content-Length": str(download.length)}
    if download.image.checksum:
        headers["Content-MD5"] = download.image.checksum
    status = 200
    if span is not None:
        status = 206
        headers["Content-Range"] = (f"bytes {download.start}-{download.start + download.length - 1}/"
                                    f"{download.image.size}")
    return StreamingResponse(download.chunks, status_code=status, media_type=OCTET_STREAM, headers=headers)


def _span(header: str) -> tuple[int | None, int | None]:
    """A ``Range: bytes=first-last`` header (one range; ``-n`` the last n bytes), as (first, last)."""
    match = _RANGE.match(header.strip())
    if match is None or match.groups() == ("", ""):
        raise RangeNotSatisfiable()
    first, last = (int(value) if value else None for value in match.groups())
    if first is not None and last is not None and last < first:
        raise RangeNotSatisfiable()
    return first, last


@router.get("/info/import")
async def import_info(ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    return {"import-methods": {"description": "Import methods available.", "type": "array",
                               "value": list(IMPORT_METHODS)}}


@router.get("/info/stores")
async def stores_info(ctx: RequestContext = Depends(caller)) -> Response:
    """Glance with one store (no ``enabled_backends``) has no store list to show."""
    raise ImageNotFound("Multi backend is not supported at this site.")
