"""Images, their members, and glance's rules for them.

The checks below answer in the words of glance's image schema
(``glance/api/v2/images.py``), since that is what clients and operators see.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tether.domain.errors import image as errors

VISIBILITIES = ("public", "private", "shared", "community")
DISK_FORMATS = ("ami", "ari", "aki", "vhd", "vhdx", "vmdk", "raw", "qcow2", "vdi", "iso", "ploop")
CONTAINER_FORMATS = ("ami", "ari", "aki", "bare", "ovf", "ova", "docker", "compressed")

QUEUED = "queued"
ACTIVE = "active"
STATUSES = ("queued", "saving", "active", "killed", "deleted", "uploading", "importing",
            "pending_delete", "deactivated")
# Images come to life queued (API) or active (seeding and snapshots, whose data is written with the record).
INITIAL_STATUSES = (QUEUED, ACTIVE)
# glance's secure hash (its ``hashing_algorithm`` default), beside the md5 ``checksum``.
HASH_ALGORITHM = "sha512"

MEMBER_STATUSES = ("pending", "accepted", "rejected")
# Formats may change only before data arrives.
FORMAT_CHANGE_STATUSES = (QUEUED, "importing")

# The list filter also takes "all".
LIST_VISIBILITIES = (*VISIBILITIES, "all")

# What a caller may set or change on an image; everything else is glance's to decide.
WRITABLE_ATTRIBUTES = ("name", "visibility", "disk_format", "container_format", "min_disk", "min_ram",
                       "protected", "os_hidden", "tags", "properties")
READONLY_ATTRIBUTES = ("created_at", "updated_at", "status", "checksum", "size", "virtual_size",
                       "direct_url", "self", "file", "schema", "id", "os_hash_algo", "os_hash_value")
RESERVED_ATTRIBUTES = ("location", "locations", "deleted", "deleted_at", "owner")
RESERVED_NAMESPACE = "os_glance"
MAX_LENGTH = 255

_UUID = re.compile(r"^([0-9a-fA-F]){8}-([0-9a-fA-F]){4}-([0-9a-fA-F]){4}-([0-9a-fA-F]){4}-([0-9a-fA-F]){12}$")


@dataclass
class Image:
    id: str
    name: str | None
    owner: str | None
    status: str = "active"
    visibility: str = "public"
    disk_format: str | None = "qcow2"
    container_format: str | None = "bare"
    min_disk: int = 0
    min_ram: int = 0
    size: int | None = None
    checksum: str | None = None
    os_hash_algo: str | None = None
    os_hash_value: str | None = None
    protected: bool = False
    # hidden from the default image list (glance's os_hidden), still shown by id
    os_hidden: bool = False
    tags: list[str] = field(default_factory=list)
    properties: dict[str, str] = field(default_factory=dict)
    created_at: float = 0.0
    updated_at: float = 0.0


@dataclass
class ImageMember:
    """A project a shared image is offered to; it sees the image, and lists it once it accepts."""

    image_id: str
    member_id: str
    status: str = "pending"
    created_at: float = 0.0
    updated_at: float = 0.0


@dataclass(frozen=True)
class ImageData:
    """What glance records of the bytes it stored: their size and hashes."""

    size: int
    checksum: str
    os_hash_value: str
    os_hash_algo: str = HASH_ALGORITHM


# -- who sees what ------------------------------------------------------------


def is_visible(image: Image, *, project_id: str | None, is_admin: bool, member_status: str | None = None) -> bool:
    """Whether glance shows this image to the caller at all (otherwise: 404).

    Public and community images are visible to everyone; private ones to
    their owner and admins; shared ones to those and to member projects,
    whatever their member status (``member_status``: the caller's, or None).
    """
    if is_admin or image.visibility in ("public", "community"):
        return True
    if project_id is not None and image.owner == project_id:
        return True
    return image.visibility == "shared" and member_status is not None


def is_listed(image: Image, *, project_id: str | None, is_admin: bool, visibility: str | None,
              member_status: str | None = None, wanted_member_status: str = "accepted") -> bool:
    """Whether ``GET /v2/images?visibility=...&member_status=...`` lists it: community
    images of other projects only when asked for (visibility community or all);
    shared images of other projects when the caller's membership has the wanted
    status (glance's default: accepted)."""
    if visibility not in (None, "all") and image.visibility != visibility:
        return False
    if not is_visible(image, project_id=project_id, is_admin=is_admin, member_status=member_status):
        return False
    if is_admin or image.owner == project_id:
        return True
    if image.visibility == "community":
        return visibility in ("community", "all")
    if image.visibility == "shared":
        return wanted_member_status in ("all", member_status)
    return True


def is_mutable(image: Image, *, project_id: str | None, is_admin: bool) -> bool:
    return is_admin or (project_id is not None and image.owner == project_id)


def listing_key(image: Image) -> tuple[float, str]:
    """glance's default order is created_at then id, both descending."""
    return (image.created_at, image.id)


# -- what a request may say ---------------------------------------------------


def check_image_id(image_id: object) -> str:
    if not isinstance(image_id, str) or not _UUID.match(image_id):
        raise errors.InvalidImageObject(reason=f"{image_id!r} does not match {_UUID.pattern!r}")
    return image_id


def check_name(name: object) -> str | None:
    if name is not None and not isinstance(name, str):
        raise errors.InvalidImageObject(reason=f"{name!r} is not of type 'null', 'string'")
    if name is not None and len(name) > MAX_LENGTH:
        raise errors.InvalidImageObject(reason=f"{name!r} is too long")
    return name


def check_owner(owner: object) -> str | None:
    if owner is not None and not isinstance(owner, str):
        raise errors.InvalidImageObject(reason=f"{owner!r} is not of type 'null', 'string'")
    if owner is not None and len(owner) > MAX_LENGTH:
        raise errors.InvalidImageObject(reason=f"{owner!r} is too long")
    return owner


def check_visibility(visibility: object) -> str:
    if visibility not in VISIBILITIES:
        raise errors.InvalidImageObject(reason=f"{visibility!r} is not one of {list(VISIBILITIES)!r}")
    return visibility  # type: ignore[return-value]


def check_disk_format(disk_format: object) -> str | None:
    if disk_format is not None and disk_format not in DISK_FORMATS:
        raise errors.InvalidImageObject(reason=f"{disk_format!r} is not one of {[None, *DISK_FORMATS]!r}")
    return disk_format  # type: ignore[return-value]


def check_container_format(container_format: object) -> str | None:
    if container_format is not None and container_format not in CONTAINER_FORMATS:
        raise errors.InvalidImageObject(
            reason=f"{container_format!r} is not one of {[None, *CONTAINER_FORMATS]!r}"
        )
    return container_format  # type: ignore[return-value]


def check_minimum(value: object) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise errors.InvalidImageObject(reason=f"{value!r} is not of type 'integer'")
    if value < 0:
        raise errors.InvalidImageObject(reason=f"{value!r} is less than the minimum of 0")
    return value


def check_protected(protected: object) -> bool:
    if not isinstance(protected, bool):
        raise errors.InvalidImageObject(reason=f"{protected!r} is not of type 'boolean'")
    return protected


check_os_hidden = check_protected


def check_tags(tags: object) -> list[str]:
    if isinstance(tags, (str, bytes)) or not isinstance(tags, Iterable):
        raise errors.InvalidImageObject(reason=f"{tags!r} is not of type 'array'")
    unique: list[str] = []
    for tag in tags:
        if not isinstance(tag, str):
            raise errors.InvalidImageObject(reason=f"{tag!r} is not of type 'string'")
        if len(tag) > MAX_LENGTH:
            raise errors.InvalidImageObject(reason=f"{tag!r} is too long")
        if tag not in unique:
            unique.append(tag)
    return unique


def check_property_name(key: object) -> str:
    if not isinstance(key, str):
        raise errors.InvalidImageObject(reason=f"{key!r} is not of type 'string'")
    if len(key) > MAX_LENGTH:
        raise errors.ImageBadRequest(reason="Custom property should not be greater than 255 characters.")
    if key in READONLY_ATTRIBUTES:
        raise errors.ReadOnlyAttribute(attribute=key)
    if key in RESERVED_ATTRIBUTES or key in WRITABLE_ATTRIBUTES or key.startswith(RESERVED_NAMESPACE):
        raise errors.ReservedAttribute(attribute=key)
    return key


def check_properties(properties: Mapping[Any, Any] | None, *, removable: bool = False) -> dict[str, Any]:
    """Custom properties: names that are not glance's own, string values
    (with ``removable``, None too: it means "remove this property")."""
    if properties is None:
        return {}
    if not isinstance(properties, Mapping):
        raise errors.InvalidImageObject(reason=f"{properties!r} is not of type 'object'")
    checked: dict[str, Any] = {}
    for key, value in properties.items():
        check_property_name(key)
        if not isinstance(value, str) and not (removable and value is None):
            raise errors.InvalidImageObject(reason=f"{value!r} is not of type 'string'")
        checked[key] = value
    return checked


def check_can_activate(disk_format: str | None, container_format: str | None) -> None:
    missing = [name for name, value in (("disk_format", disk_format), ("container_format", container_format))
               if not value]
    if len(missing) == 1:
        raise errors.ImageBadRequest(reason=f"Property {missing[0]} must be set prior to saving data.")
    if missing:
        raise errors.ImageBadRequest(reason=f"Properties {', '.join(missing)} must be set prior to saving data.")


def check_member_status(status: object) -> str:
    if status not in MEMBER_STATUSES:
        raise errors.ImageBadRequest(reason='Incorrect request: Status must be "pending", "accepted" or "rejected".')
    return status  # type: ignore[return-value]


def check_list_visibility(visibility: str | None) -> str | None:
    if visibility is not None and visibility not in LIST_VISIBILITIES:
        raise errors.InvalidVisibilityFilter(visibility=visibility)
    return visibility


def check_limit(limit: object) -> int | None:
    if limit is None:
        return None
    if not isinstance(limit, int) or isinstance(limit, bool):
        raise errors.ImageBadRequest(reason="limit param must be an integer")
    if limit < 0:
        raise errors.ImageBadRequest(reason="limit param must be positive")
    return limit


def byte_range(first: int | None, last: int | None, size: int) -> tuple[int, int]:
    """A ``Range: bytes=first-last`` (``first`` None: the last ``last`` bytes) of ``size`` bytes, as
    (start, end) with end exclusive; glance's 416 when no byte of it exists."""
    if first is None:
        if not last:
            raise errors.RangeNotSatisfiable()
        return max(size - last, 0), size
    if first >= size:
        raise errors.RangeNotSatisfiable()
    return first, size if last is None else min(last + 1, size)
