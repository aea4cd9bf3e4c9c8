"""Glance's metadata definitions catalog: namespaces and, inside them, resource type associations,
objects, properties and tags. After glance's default policy: anyone reads what is visible to them
(public namespaces, and their own project's); only admins create, change and delete."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from sqlalchemy.exc import IntegrityError

from tether.domain import metadefs as rules
from tether.domain.errors import image as errors
from tether.domain.metadefs import MetadefNamespace
from tether.runtime.runtime import Runtime
from tether.services.context import RequestContext
from tether.store import repos
from tether.store.database import Store

if TYPE_CHECKING:
    from tether.store.database import StoreConnection

Change = Callable[[MetadefNamespace, float], MetadefNamespace]


def _not_found(namespace: str) -> errors.MetadefNotFound:
    return errors.MetadefNotFound(reason=f"Metadata definition namespace={namespace} was not found.")


def _admin(ctx: RequestContext, action: str) -> None:
    if not ctx.is_admin:
        raise errors.PolicyForbidden(action=action)


class MetadefCatalog:
    """``MetadefCatalog(store, runtime)``."""

    def __init__(self, store: Store, runtime: Runtime) -> None:
        self.store = store
        self.rt = runtime

    # -- namespaces ---------------------------------------------------------

    async def create_namespace(self, ctx: RequestContext, body: dict[str, Any]) -> MetadefNamespace:
        _admin(ctx, "add_metadef_namespace")
        now = self.rt.now()
        namespace = MetadefNamespace(
            namespace=rules.check_name(body.get("namespace"), "namespace"),
            owner=ctx.project_id,
            display_name=rules.check_optional_text(body.get("display_name"), "namespace", "display_name"),
            description=rules.check_optional_text(body.get("description"), "namespace", "description"),
            visibility=rules.check_visibility(body.get("visibility", "private")),
            protected=rules.check_flag(body.get("protected", False), "namespace", "protected"),
            created_at=now, updated_at=now,
        )
        for association in body.get("resource_type_associations") or []:
            namespace = _associate(namespace, association, now)
        namespace.properties = rules.check_properties(body.get("properties"))
        for item in body.get("objects") or []:
            namespace = _add_object(namespace, item, now)
        for tag in body.get("tags") or []:
            namespace = _add_tag(namespace, _tag_name(tag), now)
        duplicate = errors.MetadefConflict(
            reason=f"The metadata definition namespace={namespace.namespace} already exists.")
        try:
            async with self.store.begin() as conn:
                if await repos.metadef_namespaces.get(conn, namespace.namespace) is not None:
                    raise duplicate
                await repos.metadef_namespaces.add(conn, namespace)
        except IntegrityError:
            raise duplicate from None
        return namespace

    async def list_namespaces(self, ctx: RequestContext, *, visibility: str | None = None,
                              resource_types: list[str] | None = None) -> list[MetadefNamespace]:
        async with self.store.begin() as conn:
            found = await repos.metadef_namespaces.find(conn)
        shown = [namespace for namespace in found
                 if rules.is_visible(namespace, project_id=ctx.project_id, is_admin=ctx.is_admin)
                 and (visibility is None or namespace.visibility == visibility)
                 and (not resource_types or any(association["name"] in resource_types
                                                for association in namespace.resource_types))]
        return sorted(shown, key=lambda namespace: (namespace.created_at, namespace.namespace))

    async def get_namespace(self, ctx: RequestContext, name: str) -> MetadefNamespace:
        async with self.store.begin() as conn:
            namespace = await repos.metadef_namespaces.get(conn, name)
        if namespace is None or not rules.is_visible(namespace, project_id=ctx.project_id, is_admin=ctx.is_admin):
            raise _not_found(name)
        return namespace

    async def update_namespace(self, ctx: RequestContext, name: str, body: dict[str, Any]) -> MetadefNamespace:
        new_name = rules.check_name(body.get("namespace", name), "namespace")

        def change(namespace: MetadefNamespace, now: float) -> MetadefNamespace:
            return replace(
                namespace, namespace=new_name,
                display_name=rules.check_optional_text(body.get("display_name", namespace.display_name),
                                                       "namespace", "display_name"),
                description=rules.check_optional_text(body.get("description", namespace.description),
                                                      "namespace", "description"),
                visibility=rules.check_visibility(body.get("visibility", namespace.visibility)),
                protected=rules.check_flag(body.get("protected", namespace.protected), "namespace", "protected"),
                updated_at=now)

        return await self._change(ctx, name, change, "modify_metadef_namespace")

    async def delete_namespace(self, ctx: RequestContext, name: str) -> None:
        _admin(ctx, "delete_metadef_namespace")
        async with self.store.begin() as conn:
            namespace = await self._visible(conn, ctx, name)
            if namespace.protected:
                raise errors.ImageForbidden(reason=f"Metadata definition namespace {name} is protected and cannot "
                                                   "be deleted.")
            await repos.metadef_namespaces.delete(conn, name)

    # -- what a namespace holds ------------------------------------------------

    async def associate(self, ctx: RequestContext, name: str, body: Any) -> dict[str, Any]:
        namespace = await self._change(ctx, name, lambda ns, now: _associate(ns, body, now),
                                       "add_metadef_resource_type_association")
        return namespace.resource_types[-1]

    async def dissociate(self, ctx: RequestContext, name: str, resource_type: str) -> None:
        def change(namespace: MetadefNamespace, now: float) -> MetadefNamespace:
            kept = [item for item in namespace.resource_types if item["name"] != resource_type]
            if len(kept) == len(namespace.resource_types):
                raise errors.MetadefNotFound(
                    reason=f"The metadata definition resource-type association of resource-type={resource_type} "
                           f"to namespace={name}, was not found.")
            return replace(namespace, resource_types=kept, updated_at=now)

        await self._change(ctx, name, change, "remove_metadef_resource_type_association")

    async def add_object(self, ctx: RequestContext, name: str, body: Any) -> dict[str, Any]:
        object_name = rules.check_name(body.get("name") if isinstance(body, dict) else None, "object")
        namespace = await self._change(ctx, name, lambda ns, now: _add_object(ns, body, now), "add_metadef_object")
        return namespace.objects[object_name]

    async def update_object(self, ctx: RequestContext, name: str, object_name: str, body: Any) -> dict[str, Any]:
        new_name = rules.check_name(body.get("name") if isinstance(body, dict) else None, "object")

        def change(namespace: MetadefNamespace, now: float) -> MetadefNamespace:
            old = _member(namespace.objects, object_name, "object", name)
            objects = {key: value for key, value in namespace.objects.items() if key != object_name}
            if new_name in objects:
                raise _duplicate("object", new_name, name)
            return replace(namespace, objects={**objects, new_name: {**_object(body, now), "created_at":
                                                                     old["created_at"]}}, updated_at=now)

        namespace = await self._change(ctx, name, change, "modify_metadef_object")
        return namespace.objects[new_name]

    async def delete_object(self, ctx: RequestContext, name: str, object_name: str) -> None:
        await self._change(ctx, name, lambda ns, now: _remove(ns, "objects", object_name, "object", now),
                           "delete_metadef_object")

    async def add_property(self, ctx: RequestContext, name: str, body: Any) -> dict[str, Any]:
        property_name = rules.check_name(body.get("name") if isinstance(body, dict) else None, "property")

        def change(namespace: MetadefNamespace, now: float) -> MetadefNamespace:
            if property_name in namespace.properties:
                raise _duplicate("property", property_name, name)
            checked = rules.check_property(property_name, body)
            return replace(namespace, properties={**namespace.properties, property_name: checked}, updated_at=now)

        namespace = await self._change(ctx, name, change, "add_metadef_property")
        return namespace.properties[property_name]

    async def update_property(self, ctx: RequestContext, name: str, property_name: str, body: Any) -> dict[str, Any]:
        new_name = rules.check_name(body.get("name", property_name) if isinstance(body, dict) else None, "property")

        def change(namespace: MetadefNamespace, now: float) -> MetadefNamespace:
            _member(namespace.properties, property_name, "property", name)
            properties = {key: value for key, value in namespace.properties.items() if key != property_name}
            if new_name in properties:
                raise _duplicate("property", new_name, name)
            properties[new_name] = rules.check_property(new_name, body)
            return replace(namespace, properties=properties, updated_at=now)

        namespace = await self._change(ctx, name, change, "modify_metadef_property")
        return namespace.properties[new_name]

    async def delete_property(self, ctx: RequestContext, name: str, property_name: str) -> None:
        await self._change(ctx, name, lambda ns, now: _remove(ns, "properties", property_name, "property", now),
                           "remove_metadef_property")

    async def set_tags(self, ctx: RequestContext, name: str, tags: list[Any], *, append: bool) -> list[dict[str, Any]]:
        names = [_tag_name(tag) for tag in tags]
        if len(set(names)) != len(names):
            raise errors.MetadefConflict(reason=f"A metadata tag with name={names[0]} already exists in "
                                                f"namespace={name}.")

        def change(namespace: MetadefNamespace, now: float) -> MetadefNamespace:
            kept = replace(namespace, tags=dict(namespace.tags) if append else {})
            for tag_name in names:
                kept = _add_tag(kept, tag_name, now)
            return replace(kept, updated_at=now)

        namespace = await self._change(ctx, name, change, "add_metadef_tags")
        return [namespace.tags[tag_name] for tag_name in names]

    async def add_tag(self, ctx: RequestContext, name: str, tag_name: str) -> dict[str, Any]:
        namespace = await self._change(ctx, name, lambda ns, now: _add_tag(ns, tag_name, now), "add_metadef_tag")
        return namespace.tags[tag_name]

    async def rename_tag(self, ctx: RequestContext, name: str, tag_name: str, new_name: object) -> dict[str, Any]:
        checked = rules.check_name(new_name, "tag")

        def change(namespace: MetadefNamespace, now: float) -> MetadefNamespace:
            old = _member(namespace.tags, tag_name, "tag", name)
            tags = {key: value for key, value in namespace.tags.items() if key != tag_name}
            if checked in tags:
                raise _duplicate("tag", checked, name)
            tags[checked] = {**old, "name": checked, "updated_at": now}
            return replace(namespace, tags=tags, updated_at=now)

        namespace = await self._change(ctx, name, change, "modify_metadef_tag")
        return namespace.tags[checked]

    async def delete_tag(self, ctx: RequestContext, name: str, tag_name: str) -> None:
        await self._change(ctx, name, lambda ns, now: _remove(ns, "tags", tag_name, "tag", now),
                           "delete_metadef_tag")

    async def delete_objects(self, ctx: RequestContext, name: str) -> None:
        await self._change(ctx, name, lambda ns, now: replace(ns, objects={}, updated_at=now), "delete_metadef_object")

    async def delete_properties(self, ctx: RequestContext, name: str) -> None:
        await self._change(ctx, name, lambda ns, now: replace(ns, properties={}, updated_at=now),
                           "remove_metadef_property")

    async def delete_tags(self, ctx: RequestContext, name: str) -> None:
        await self._change(ctx, name, lambda ns, now: replace(ns, tags={}, updated_at=now), "delete_metadef_tags")

    # -- steps ----------------------------------------------------------------

    async def _visible(self, conn: StoreConnection, ctx: RequestContext, name: str) -> MetadefNamespace:
        namespace = await repos.metadef_namespaces.get(conn, name)
        if namespace is None or not rules.is_visible(namespace, project_id=ctx.project_id, is_admin=ctx.is_admin):
            raise _not_found(name)
        return namespace

    async def _change(self, ctx: RequestContext, name: str, change: Change, action: str) -> MetadefNamespace:
        """Apply ``change`` to the namespace in one transaction (admins only, as glance's policy says)."""
        async with self.store.begin() as conn:
            namespace = await self._visible(conn, ctx, name)
            _admin(ctx, action)
            changed = change(namespace, self.rt.now())
            if changed.namespace != name:
                if await repos.metadef_namespaces.get(conn, changed.namespace) is not None:
                    raise errors.MetadefConflict(
                        reason=f"The metadata definition namespace={changed.namespace} already exists.")
                await repos.metadef_namespaces.delete(conn, name)
                await repos.metadef_namespaces.add(conn, changed)
            else:
                await repos.metadef_namespaces.update(conn, name, **{
                    key: getattr(changed, key) for key in ("display_name", "description", "visibility", "protected",
                                                           "resource_types", "objects", "properties", "tags",
                                                           "updated_at")})
        return changed


def _duplicate(kind: str, item: str, namespace: str) -> errors.MetadefConflict:
    what = "metadata tag" if kind == "tag" else f"metadata definition {kind}"
    return errors.MetadefConflict(reason=f"A {what} with name={item} already exists in namespace={namespace}.")


def _member(items: dict[str, dict[str, Any]], item: str, kind: str, namespace: str) -> dict[str, Any]:
    if item not in items:
        raise errors.MetadefNotFound(reason=f"The metadata definition {kind} with name={item} was not found in "
                                            f"namespace={namespace}.")
    return items[item]


def _remove(namespace: MetadefNamespace, attribute: str, item: str, kind: str, now: float) -> MetadefNamespace:
    items = getattr(namespace, attribute)
    _member(items, item, kind, namespace.namespace)
    return replace(namespace, **{attribute: {key: value for key, value in items.items() if key != item}},
                   updated_at=now)


def _associate(namespace: MetadefNamespace, body: Any, now: float) -> MetadefNamespace:
    if not isinstance(body, dict):
        raise errors.ImageBadRequest(reason="Provided object does not match schema 'resource_type_association': "
                                            f"{body!r} is not of type 'object'")
    resource_type = rules.check_name(body.get("name"), "resource_type_association")
    if resource_type not in rules.RESOURCE_TYPES:
        raise errors.MetadefNotFound(reason=f"The metadata definition resource-type with name={resource_type}, was "
                                            "not found.")
    if any(item["name"] == resource_type for item in namespace.resource_types):
        raise errors.MetadefConflict(
            reason=f"The metadata definition resource-type association of resource-type={resource_type} to "
                   f"namespace={namespace.namespace}, already exists.")
    association = {"name": resource_type, "created_at": now, "updated_at": now}
    for optional in ("prefix", "properties_target"):
        if body.get(optional) is not None:
            association[optional] = rules.check_optional_text(body[optional], "resource_type_association", optional)
    return replace(namespace, resource_types=[*namespace.resource_types, association], updated_at=now)


def _object(body: Any, now: float) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise errors.ImageBadRequest(reason=f"Provided object does not match schema 'object': {body!r} is not of "
                                            "type 'object'")
    required = body.get("required", [])
    if not isinstance(required, list) or not all(isinstance(item, str) for item in required):
        raise errors.ImageBadRequest(reason=f"Provided object does not match schema 'object': {required!r} is not "
                                            "an array of strings")
    return {"name": rules.check_name(body.get("name"), "object"),
            "description": rules.check_optional_text(body.get("description"), "object", "description"),
            "required": required, "properties": rules.check_properties(body.get("properties")),
            "created_at": now, "updated_at": now}


def _add_object(namespace: MetadefNamespace, body: Any, now: float) -> MetadefNamespace:
    item = _object(body, now)
    if item["name"] in namespace.objects:
        raise _duplicate("object", item["name"], namespace.namespace)
    return replace(namespace, objects={**namespace.objects, item["name"]: item}, updated_at=now)


def _tag_name(tag: Any) -> str:
    return rules.check_name(tag.get("name") if isinstance(tag, dict) else None, "tag")


def _add_tag(namespace: MetadefNamespace, tag_name: str, now: float) -> MetadefNamespace:
    checked = rules.check_name(tag_name, "tag")
    if checked in namespace.tags:
        raise _duplicate("tag", checked, namespace.namespace)
    return replace(namespace, tags={**namespace.tags, checked: {"name": checked, "created_at": now,
                                                                "updated_at": now}})
