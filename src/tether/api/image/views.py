"""An image as glance v2 shows it: flat, with custom properties beside the base attributes."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from tether.domain.image import Image, ImageMember

IMAGE_SCHEMA = "/v2/schemas/image"
IMAGES_SCHEMA = "/v2/schemas/images"


def isotime(moment: float) -> str:
    """oslo.utils' ``isotime``, as glance formats its timestamps: whole seconds, with Z."""
    return datetime.fromtimestamp(moment, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def image_href(image_id: str) -> str:
    return f"/v2/images/{image_id}"


def image_view(image: Image) -> dict[str, Any]:
    view: dict[str, Any] = dict(image.properties)
    view.update({
        "id": image.id, "name": image.name, "status": image.status, "visibility": image.visibility,
        "protected": image.protected, "os_hidden": image.os_hidden, "tags": list(image.tags),
        "disk_format": image.disk_format, "container_format": image.container_format,
        "min_disk": image.min_disk, "min_ram": image.min_ram,
        # glance works out a virtual size only by inspecting a disk image's format; Tether does not
        "size": image.size, "virtual_size": None,
        "checksum": image.checksum, "os_hash_algo": image.os_hash_algo, "os_hash_value": image.os_hash_value,
        "owner": image.owner,
        "created_at": isotime(image.created_at), "updated_at": isotime(image.updated_at),
        "self": image_href(image.id), "file": f"{image_href(image.id)}/file", "schema": IMAGE_SCHEMA,
    })
    return view


MEMBER_SCHEMA = "/v2/schemas/member"
MEMBERS_SCHEMA = "/v2/schemas/members"


def member_view(member: ImageMember) -> dict[str, Any]:
    return {"image_id": member.image_id, "member_id": member.member_id, "status": member.status,
            "created_at": isotime(member.created_at), "updated_at": isotime(member.updated_at),
            "schema": MEMBER_SCHEMA}
