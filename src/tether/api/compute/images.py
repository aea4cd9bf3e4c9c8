"""nova's image proxy (/images, up to 2.35): the image service's images as nova shows them, and their metadata.

Everything is read and changed through the image service's public
operations; nova only translates (glance's status to its own, properties to
metadata). From 2.36 the proxy is gone, as in nova: 404.
"""

from __future__ import annotations

from typing import Any

from fastapi import Depends, Request, Response
from fastapi.responses import JSONResponse

from tether.api import paths
from tether.api.compute import views
from tether.api.compute.bodies import fail
from tether.api.compute.server_actions import JsonBody, metadata_field
from tether.api.deps import caller, cloud
from tether.api.versions import Microversion
from tether.domain.errors import TetherError
from tether.domain.errors import compute as ce
from tether.domain.errors import image as ie
from tether.domain.image import Image
from tether.services.context import RequestContext

router = paths.router("compute")

# nova's image view: glance status -> (status, progress)
_STATUS = {"queued": ("SAVING", 25), "saving": ("SAVING", 50), "uploading": ("SAVING", 50),
           "importing": ("SAVING", 50), "active": ("ACTIVE", 100), "killed": ("ERROR", 0),
           "deleted": ("DELETED", 0), "pending_delete": ("DELETED", 0), "deactivated": ("ERROR", 0)}


class ImageNotFound(ce.ComputeNotFound):
    template = "Image not found."


class ImageMetadataNotFound(ce.ComputeNotFound):
    template = "Image metadata item was not found"


def _gone_after_2_35(request: Request) -> bool:
    version: Microversion = request.state.microversion
    return version.at_least("2.36")


def _not_found() -> JSONResponse:
    return JSONResponse({"itemNotFound": {"code": 404, "message": "The resource could not be found."}},
                        status_code=404)


def _links(request: Request, image_id: str) -> list[dict[str, str]]:
    base = request.app.state.base_url
    return [*views.links(base, "images", image_id),
            {"rel": "alternate", "type": "application/vnd.openstack.image", "href": f"{base}/image/images/{image_id}"}]


def image_detail(request: Request, image: Image) -> dict[str, Any]:
    status, progress = _STATUS.get(image.status, ("UNKNOWN", 0))
    properties = {key: str(value) for key, value in (image.properties or {}).items()}
    body: dict[str, Any] = {
        "id": image.id, "name": image.name, "status": status, "progress": progress,
        "minRam": image.min_ram, "minDisk": image.min_disk, "metadata": properties,
        "created": views.isotime(image.created_at), "updated": views.isotime(image.updated_at),
        "links": _links(request, image.id), "OS-EXT-IMG-SIZE:size": image.size,
    }
    server = properties.get("instance_uuid")
    if server:
        body["server"] = {"id": server, "links": views.links(request.app.state.base_url, "servers", server)}
    return body


async def _image(request: Request, ctx: RequestContext, image_id: str) -> Image:
    try:
        return await cloud(request).image.get_image(ctx, image_id)
    except ie.ImageNotFound:
        raise ImageNotFound() from None


def _kept(request: Request, image: Image) -> bool:
    """nova's filters on the proxy: name, status, server, type, minRam, minDisk."""
    query = request.query_params
    status, _ = _STATUS.get(image.status, ("UNKNOWN", 0))
    properties = image.properties or {}
    checks = (("name", image.name), ("status", status), ("server", properties.get("instance_uuid")),
              ("type", properties.get("image_type") or None))
    for key, value in checks:
        if key in query and (value is None or query[key].rsplit("/", 1)[-1] != value):
            return False
    for key, value in (("minRam", image.min_ram), ("minDisk", image.min_disk)):
        if key in query:
            try:
                if value < int(query[key]):
                    return False
            except ValueError:
                raise fail(f"Invalid {key} filter [{query[key]}]") from None
    return True


async def _listed(request: Request, ctx: RequestContext) -> list[Image]:
    query = request.query_params
    limit = None
    if "limit" in query:
        try:
            limit = int(query["limit"])
        except ValueError:
            raise fail("limit param must be an integer") from None
        if limit < 0:
            raise fail("limit param must be positive")
    images = [image for image in await cloud(request).image.list_images(ctx) if _kept(request, image)]
    marker = query.get("marker")
    if marker is not None:
        ids = [image.id for image in images]
        if marker not in ids:
            raise fail(f"marker [{marker}] not found")
        images = images[ids.index(marker) + 1:]
    return images if limit is None else images[:limit]


@router.get("/images")
async def list_images(request: Request, ctx: RequestContext = Depends(caller)) -> JSONResponse:
    if _gone_after_2_35(request):
        return _not_found()
    images = await _listed(request, ctx)
    return JSONResponse({"images": [{"id": image.id, "name": image.name, "links": _links(request, image.id)}
                                    for image in images]})


@router.get("/images/detail")
async def list_images_detail(request: Request, ctx: RequestContext = Depends(caller)) -> JSONResponse:
    if _gone_after_2_35(request):
        return _not_found()
    return JSONResponse({"images": [image_detail(request, image) for image in await _listed(request, ctx)]})


@router.get("/images/{image_id}")
async def show_image(image_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> JSONResponse:
    if _gone_after_2_35(request):
        return _not_found()
    return JSONResponse({"image": image_detail(request, await _image(request, ctx, image_id))})


@router.get("/images/", include_in_schema=False)
@router.delete("/images/", include_in_schema=False)
async def no_image_id(ctx: RequestContext = Depends(caller)) -> JSONResponse:
    """An empty image id names no image: nova's router answers 404 (not the list, not a 405)."""
    return _not_found()


@router.delete("/images/{image_id}", status_code=204)
async def delete_image(image_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> Response:
    if _gone_after_2_35(request):
        return _not_found()
    await _image(request, ctx, image_id)
    try:
        await cloud(request).image.delete_image(ctx, image_id)
    except ie.ImageNotFound:
        raise ImageNotFound() from None
    except TetherError as error:
        raise ce.ComputeForbidden(message=error.message) from None
    return Response(status_code=204)


# -- metadata ----------------------------------------------------------------------------------


async def _set_metadata(request: Request, ctx: RequestContext, image_id: str, metadata: dict[str, str], *,
                        replace: bool) -> dict[str, str]:
    image = await _image(request, ctx, image_id)
    changes: dict[str, Any] = dict(metadata)
    if replace:
        changes.update({key: None for key in image.properties or {} if key not in metadata})
    try:
        updated = await cloud(request).image.update_image(ctx, image_id, properties=changes)
    except ie.ImageNotFound:
        raise ImageNotFound() from None
    except TetherError as error:
        if error.status == 403:
            raise ce.ComputeForbidden(message=error.message) from None
        raise fail(error.message) from None
    return {key: str(value) for key, value in (updated.properties or {}).items()}


def _body_of(body: Any, key: str) -> Any:
    if not isinstance(body, dict) or key not in body:
        raise fail(f"Invalid input for field/attribute body. '{key}' is a required property")
    return body[key]


@router.get("/images/{image_id}/metadata")
async def list_image_metadata(image_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> JSONResponse:
    if _gone_after_2_35(request):
        return _not_found()
    image = await _image(request, ctx, image_id)
    return JSONResponse({"metadata": {key: str(value) for key, value in (image.properties or {}).items()}})


@router.put("/images/{image_id}/metadata")
async def replace_image_metadata(image_id: str, request: Request, raw: JsonBody,
                                 ctx: RequestContext = Depends(caller)) -> JSONResponse:
    if _gone_after_2_35(request):
        return _not_found()
    metadata = metadata_field(_body_of(raw.root, "metadata"))
    return JSONResponse({"metadata": await _set_metadata(request, ctx, image_id, metadata, replace=True)})


@router.post("/images/{image_id}/metadata")
async def update_image_metadata(image_id: str, request: Request, raw: JsonBody,
                                ctx: RequestContext = Depends(caller)) -> JSONResponse:
    if _gone_after_2_35(request):
        return _not_found()
    metadata = metadata_field(_body_of(raw.root, "metadata"))
    return JSONResponse({"metadata": await _set_metadata(request, ctx, image_id, metadata, replace=False)})


@router.get("/images/{image_id}/metadata/{key}")
async def show_image_metadata_item(image_id: str, key: str, request: Request,
                                   ctx: RequestContext = Depends(caller)) -> JSONResponse:
    if _gone_after_2_35(request):
        return _not_found()
    image = await _image(request, ctx, image_id)
    if key not in (image.properties or {}):
        raise ImageMetadataNotFound()
    return JSONResponse({"meta": {key: str(image.properties[key])}})


@router.put("/images/{image_id}/metadata/{key}")
async def set_image_metadata_item(image_id: str, key: str, request: Request, raw: JsonBody,
                                  ctx: RequestContext = Depends(caller)) -> JSONResponse:
    if _gone_after_2_35(request):
        return _not_found()
    meta = metadata_field(_body_of(raw.root, "meta"))
    if len(meta) > 1:
        raise fail("Request body contains too many items")
    if key not in meta:
        raise fail("Request body and URI mismatch")
    await _set_metadata(request, ctx, image_id, meta, replace=False)
    return JSONResponse({"meta": meta})


@router.delete("/images/{image_id}/metadata/{key}", status_code=204)
async def delete_image_metadata_item(image_id: str, key: str, request: Request,
                                     ctx: RequestContext = Depends(caller)) -> Response:
    if _gone_after_2_35(request):
        return _not_found()
    image = await _image(request, ctx, image_id)
    if key not in (image.properties or {}):
        raise ImageMetadataNotFound()
    await _set_metadata(request, ctx, image_id, {key: None}, replace=False)  # type: ignore[dict-item]
    return Response(status_code=204)
