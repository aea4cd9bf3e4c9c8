"""GET /v2/schemas/image and /v2/schemas/images: glance's JSON schemas, for the attributes Tether has."""

from __future__ import annotations

from typing import Any

from tether.domain import image as rules

_UUID_PATTERN = ("^([0-9a-fA-F]){8}-([0-9a-fA-F]){4}-([0-9a-fA-F]){4}-([0-9a-fA-F]){4}-([0-9a-fA-F]){12}$")


def _read_only(kind: Any, description: str) -> dict[str, Any]:
    return {"type": kind, "readOnly": True, "description": description}


def image_schema() -> dict[str, Any]:
    properties: dict[str, Any] = {
        "id": {"type": "string", "description": "An identifier for the image", "pattern": _UUID_PATTERN},
        "name": {"type": ["null", "string"], "description": "Descriptive name for the image",
                 "maxLength": rules.MAX_LENGTH},
        "status": {**_read_only("string", "Status of the image"), "enum": list(rules.STATUSES)},
        "visibility": {"type": "string", "description": "Scope of image accessibility",
                       "enum": list(rules.VISIBILITIES)},
        "protected": {"type": "boolean", "description": "If true, image will not be deletable."},
        "os_hidden": {"type": "boolean",
                      "description": "If true, image will not appear in default image list response."},
        "checksum": {**_read_only(["null", "string"], "md5 hash of image contents."), "maxLength": 32},
        "os_hash_algo": {**_read_only(["null", "string"], "Algorithm to calculate the os_hash_value"),
                         "maxLength": 64},
        "os_hash_value": {**_read_only(["null", "string"], "Hexdigest of the image contents using the "
                                       "algorithm specified by the os_hash_algo"), "maxLength": 128},
        "owner": {"type": ["null", "string"], "description": "Owner of the image", "maxLength": 255},
        "size": _read_only(["null", "integer"], "Size of image file in bytes"),
        "virtual_size": _read_only(["null", "integer"], "Virtual size of image in bytes"),
        "container_format": {"type": ["null", "string"], "description": "Format of the container",
                             "enum": [None, *rules.CONTAINER_FORMATS]},
        "disk_format": {"type": ["null", "string"], "description": "Format of the disk",
                        "enum": [None, *rules.DISK_FORMATS]},
        "created_at": _read_only("string", "Date and time of image registration"),
        "updated_at": _read_only("string", "Date and time of the last image modification"),
        "tags": {"type": "array", "description": "List of strings related to the image",
                 "items": {"type": "string", "maxLength": rules.MAX_LENGTH}},
        "min_ram": {"type": "integer", "description": "Amount of ram (in MB) required to boot image."},
        "min_disk": {"type": "integer", "description": "Amount of disk space (in GB) required to boot image."},
        "self": _read_only("string", "An image self url"),
        "file": _read_only("string", "An image file url"),
        "schema": _read_only("string", "An image schema url"),
    }
    return {
        "name": "image",
        "properties": properties,
        # custom properties: any other name, string values (glance's PermissiveSchema)
        "additionalProperties": {"type": "string"},
        "links": [{"rel": "self", "href": "{self}"}, {"rel": "enclosure", "href": "{file}"},
                  {"rel": "describedby", "href": "{schema}"}],
    }


def images_schema() -> dict[str, Any]:
    return {
        "name": "images",
        "properties": {
            "images": {"type": "array", "items": image_schema()},
            "schema": {"type": "string"},
            "first": {"type": "string"},
            "next": {"type": "string"},
        },
        "links": [{"rel": "first", "href": "{first}"}, {"rel": "next", "href": "{next}"},
                  {"rel": "describedby", "href": "{schema}"}],
    }


def member_schema() -> dict[str, Any]:
    return {
        "name": "member",
        "properties": {
            "image_id": {"type": "string", "description": "An identifier for the image",
                         "pattern": _UUID_PATTERN},
            "member_id": {"type": "string", "description": "An identifier for the image member (tenantId)"},
            "status": {"type": "string", "description": "The status of this image member",
                       "enum": list(rules.MEMBER_STATUSES)},
            "created_at": {"type": "string", "description": "Date and time of image member creation"},
            "updated_at": {"type": "string", "description": "Date and time of last modification of image member"},
            "schema": {"type": "string", "readOnly": True},
        },
    }


def members_schema() -> dict[str, Any]:
    return {
        "name": "members",
        "properties": {"members": {"type": "array", "items": member_schema()}, "schema": {"type": "string"}},
        "links": [{"rel": "describedby", "href": "{schema}"}],
    }
