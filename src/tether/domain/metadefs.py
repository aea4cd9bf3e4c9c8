"""Glance's metadata definitions catalog (``/v2/metadefs``): namespaces of documented properties,
objects and tags, each namespace tied to the resource types it applies to.

A namespace is kept as one document: its objects, properties, tags and
resource type associations live inside it, since they are only ever read and
changed through it. The rules and words are glance's (``glance/api/v2/metadef_*``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tether.domain.errors import image as errors

# The resource types glance's database is seeded with; namespaces are associated with these.
RESOURCE_TYPES = ("OS::Glance::Image", "OS::Cinder::Volume", "OS::Nova::Flavor", "OS::Nova::Aggregate",
                  "OS::Nova::Server")
VISIBILITIES = ("public", "private")
PROPERTY_TYPES = ("array", "boolean", "integer", "number", "object", "string")
MAX_NAME = 80  # glance's metadef name columns


@dataclass
class MetadefNamespace:
    namespace: str
    owner: str | None
    display_name: str | None = None
    description: str | None = None
    visibility: str = "private"
    protected: bool = False
    # [{"name", "prefix", "properties_target", "created_at", "updated_at"}]
    resource_types: list[dict[str, Any]] = field(default_factory=list)
    # name -> {"name", "description", "required", "properties", "created_at", "updated_at"}
    objects: dict[str, dict[str, Any]] = field(default_factory=dict)
    # name -> the property's JSON schema, with its "name"
    properties: dict[str, dict[str, Any]] = field(default_factory=dict)
    # name -> {"name", "created_at", "updated_at"}
    tags: dict[str, dict[str, Any]] = field(default_factory=dict)
    created_at: float = 0.0
    updated_at: float = 0.0


def is_visible(namespace: MetadefNamespace, *, project_id: str | None, is_admin: bool) -> bool:
    return is_admin or namespace.visibility == "public" or (project_id is not None and namespace.owner == project_id)


def check_name(value: object, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise errors.ImageBadRequest(reason=f"Provided object does not match schema '{what}': {value!r} is not "
                                            "a non-empty 'string'")
    if len(value) > MAX_NAME:
        raise errors.ImageBadRequest(reason=f"Provided object does not match schema '{what}': {value!r} is too "
                                            "long")
    return value


def check_visibility(value: object) -> str:
    if value not in VISIBILITIES:
        raise errors.ImageBadRequest(reason=f"Provided object does not match schema 'namespace': {value!r} is not "
                                            f"one of {list(VISIBILITIES)!r}")
    return value  # type: ignore[return-value]


def check_optional_text(value: object, what: str, name: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise errors.ImageBadRequest(reason=f"Provided object does not match schema '{what}': {value!r} is not of "
                                            f"type 'string' ({name})")
    return value


def check_flag(value: object, what: str, name: str) -> bool:
    if not isinstance(value, bool):
        raise errors.ImageBadRequest(reason=f"Provided object does not match schema '{what}': {value!r} is not of "
                                            f"type 'boolean' ({name})")
    return value


def check_property(name: str, body: object) -> dict[str, Any]:
    """A property definition: a name, a title and a JSON-schema type, as glance's property schema needs."""
    if not isinstance(body, dict):
        raise errors.ImageBadRequest(reason=f"Provided object does not match schema 'property': {body!r} is not of "
                                            "type 'object'")
    check_name(name, "property")
    for required in ("title", "type"):
        if required not in body:
            raise errors.ImageBadRequest(reason=f"Provided object does not match schema 'property': "
                                                f"'{required}' is a required property")
    check_name(body["title"], "property")
    if body["type"] not in PROPERTY_TYPES:
        raise errors.ImageBadRequest(reason=f"Provided object does not match schema 'property': {body['type']!r} "
                                            f"is not one of {list(PROPERTY_TYPES)!r}")
    if "enum" in body and not isinstance(body["enum"], list):
        raise errors.ImageBadRequest(reason=f"Provided object does not match schema 'property': {body['enum']!r} "
                                            "is not of type 'array'")
    return {**body, "name": name}


def check_properties(body: object) -> dict[str, dict[str, Any]]:
    if body is None:
        return {}
    if not isinstance(body, dict):
        raise errors.ImageBadRequest(reason=f"Provided object does not match schema 'properties': {body!r} is not "
                                            "of type 'object'")
    return {name: check_property(name, value) for name, value in body.items()}
