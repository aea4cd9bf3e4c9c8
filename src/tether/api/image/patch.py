"""PATCH /v2/images/{id}: glance's JSON-patch dialect, read and applied as glance does.

Glance does not apply RFC 6902 as such: paths are one level deep, ``add``
sets a base attribute or a property whether or not it exists (in the v2.1
media type; v2.0 refuses to add what is there), ``replace`` of a missing
property is a conflict, and base attributes cannot be removed. The
operations are applied in order to a copy of the image, and the result is
handed to the service as one update, so a patch takes effect entirely or not
at all.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from tether.domain import image as rules
from tether.domain.errors.image import ImageBadRequest, ImageConflict, ImageForbidden
from tether.domain.image import Image
from tether.services.context import RequestContext

MEDIA_TYPES = {
    "application/openstack-images-v2.0-json-patch": 4,
    "application/openstack-images-v2.1-json-patch": 10,
}
OPERATIONS = ("add", "remove", "replace")
# Paths one level deeper than an attribute; only locations have them in glance.
PATH_DEPTHS = {"locations": {"add": 2, "remove": 2, "replace": 1}}
# What the service can change, as attributes of the image.
BASE_ATTRIBUTES = ("name", "visibility", "disk_format", "container_format", "min_disk", "min_ram", "protected",
                   "os_hidden", "tags")
# Glance's owner: shown as an attribute, changed by admins only.
SHOWN_ONLY = ("owner",)
_CHECKS = {
    "name": rules.check_name, "visibility": rules.check_visibility, "disk_format": rules.check_disk_format,
    "container_format": rules.check_container_format, "min_disk": rules.check_minimum,
    "min_ram": rules.check_minimum, "protected": rules.check_protected, "os_hidden": rules.check_os_hidden,
    "tags": rules.check_tags,
}


@dataclass(frozen=True)
class Change:
    op: str
    path: list[str]
    value: Any = None


def parse(body: Any, media_type: str) -> list[Change]:
    """glance's ``RequestDeserializer.update``; ``media_type`` is one of MEDIA_TYPES."""
    draft = MEDIA_TYPES[media_type]
    if not isinstance(body, list):
        raise ImageBadRequest(reason="Request body must be a JSON array of operation objects.")
    changes = []
    for raw in body:
        if not isinstance(raw, dict):
            raise ImageBadRequest(reason="Operations must be JSON objects.")
        op, pointer = _operation_d10(raw) if draft == 10 else _operation_d4(raw)
        path = decode_pointer(pointer)
        limit = PATH_DEPTHS.get(path[0], {}).get(op, 1)
        if len(path) != limit:
            raise ImageBadRequest(reason=f"Invalid JSON pointer for this resource: '/{'/'.join(path)}'")
        value = None
        if op != "remove":
            if "value" not in raw:
                raise ImageBadRequest(reason=f'Operation "{op}" requires a member named "value".')
            value = raw["value"]
        _check(op, path[0], value)
        changes.append(Change(op, path, value))
    return changes


def _operation_d10(raw: dict[str, Any]) -> tuple[str, Any]:
    op = raw.get("op")
    if op is None:
        raise ImageBadRequest(reason="Unable to find `op` in JSON Schema change. It must be one of the following: "
                                     f"{', '.join(OPERATIONS)}.")
    if op not in OPERATIONS:
        raise ImageBadRequest(reason=f"Invalid operation: `{op}`. It must be one of the following: "
                                     f"{', '.join(OPERATIONS)}.")
    if "path" not in raw:
        raise ImageBadRequest(reason="Unable to find 'path' in JSON Schema change")
    return op, raw["path"]


def _operation_d4(raw: dict[str, Any]) -> tuple[str, Any]:
    found = [op for op in OPERATIONS if op in raw]
    if len(found) > 1:
        raise ImageBadRequest(reason='Operation objects must contain only one member named "add", "remove", or '
                                     '"replace".')
    if not found:
        raise ImageBadRequest(reason='Operation objects must contain exactly one member named "add", "remove", '
                                     'or "replace".')
    return found[0], raw[found[0]]


def decode_pointer(pointer: Any) -> list[str]:
    """glance's ``_decode_json_pointer``, with its checks and its words."""
    if not isinstance(pointer, str) or not pointer.startswith("/"):
        raise ImageBadRequest(reason=f'Pointer `{pointer}` does not start with "/".')
    if re.search(r"/\s*?/", pointer[1:]):
        raise ImageBadRequest(reason=f'Pointer `{pointer}` contains adjacent "/".')
    if len(pointer) > 1 and pointer.endswith("/"):
        raise ImageBadRequest(reason=f'Pointer `{pointer}` end with "/".')
    if pointer[1:].strip() == "/":
        raise ImageBadRequest(reason=f"Pointer `{pointer}` does not contains valid token.")
    if re.search("~[^01]", pointer) or pointer.endswith("~"):
        raise ImageBadRequest(reason=f'Pointer `{pointer}` contains "~" not part of a recognized escape sequence.')
    return [part.replace("~1", "/").replace("~0", "~").strip() for part in pointer.lstrip("/").split("/")]


def _check(op: str, root: str, value: Any) -> None:
    """glance's ``_validate_change``: read-only and reserved names, then the value against the schema."""
    if root in rules.READONLY_ATTRIBUTES:
        raise ImageForbidden(reason=f"Attribute '{root}' is read-only.")
    if root in SHOWN_ONLY:
        return
    if root in rules.RESERVED_ATTRIBUTES or root.startswith(rules.RESERVED_NAMESPACE):
        raise ImageForbidden(reason=f"Attribute '{root}' is reserved.")
    if op == "remove":
        return
    if root in _CHECKS:
        _CHECKS[root](value)
    else:
        rules.check_properties({root: value})


def apply(image: Image, changes: list[Change], media_type: str, ctx: RequestContext) -> dict[str, Any]:
    """The keyword arguments for ``ImageService.update_image`` that make ``image`` what the patch says."""
    draft = MEDIA_TYPES[media_type]
    attributes: dict[str, Any] = {name: getattr(image, name) for name in (*BASE_ATTRIBUTES, "owner")}
    properties: dict[str, Any] = dict(image.properties)
    for change in changes:
        root = change.path[0]
        if root in SHOWN_ONLY:
            if _keep_shown_only(image, change, ctx):
                attributes["owner"] = change.value
        elif change.op == "remove":
            if root in attributes:
                raise ImageForbidden(reason=f"Property {root} may not be removed.")
            if root not in properties:
                raise ImageConflict(reason=f"Property {root} does not exist.")
            del properties[root]
        elif root in attributes:
            if change.op == "add" and draft == 4:
                raise ImageConflict(reason=f"Property {root} already present.")
            attributes[root] = _CHECKS[root](change.value)
        else:
            if change.op == "replace" and root not in properties:
                raise ImageConflict(reason=f"Property {root} does not exist.")
            if change.op == "add" and draft == 4 and root in properties:
                raise ImageConflict(reason=f"Property {root} already present.")
            properties[root] = change.value
    updates: dict[str, Any] = {name: value for name, value in attributes.items() if value != getattr(image, name)}
    changed = {key: value for key, value in properties.items() if image.properties.get(key) != value}
    removed = {key: None for key in image.properties if key not in properties}
    if changed or removed:
        updates["properties"] = {**changed, **removed}
    return updates


def _keep_shown_only(image: Image, change: Change, ctx: RequestContext) -> bool:
    """Whether the change gives the image another owner (an admin's to make)."""
    root = change.path[0]
    if change.op == "remove":
        raise ImageForbidden(reason=f"Property {root} may not be removed.")
    if not ctx.is_admin:
        raise ImageForbidden(reason="Owner can't be updated by non admin.")
    rules.check_owner(change.value)
    return change.value != image.owner
