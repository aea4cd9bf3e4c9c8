"""Image records (glance v2): create, show, list, update and delete.

The data of an image comes and goes through ``data.py``; deleting an image
deletes its data and its members too.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import Any

from sqlalchemy.exc import IntegrityError

from tether.domain import image as rules
from tether.domain.errors import image as errors
from tether.domain.ids import new_uuid
from tether.domain.image import Image
from tether.domain.listing import ListQuery
from tether.drivers.image_files import ImageFiles
from tether.runtime.runtime import Runtime
from tether.services.context import RequestContext
from tether.services.image import access
from tether.store import repos
from tether.store.database import Store


def _duplicate(image_id: str) -> errors.ImageConflict:
    return errors.ImageConflict(reason=f"Image ID {image_id} already exists!")


class ImageRecords:
    """``ImageRecords(store, runtime, rng, files)``: the runtime tells the time, the RNG makes ids,
    ``files`` holds the data a delete removes."""

    def __init__(self, store: Store, runtime: Runtime, rng: random.Random, files: ImageFiles) -> None:
        self.store = store
        self.rt = runtime
        self.rng = rng
        self.files = files

    def now(self) -> float:
        return self.rt.now()

    async def create_image(
        self,
        ctx: RequestContext,
        *,
        name: str | None = None,
        id: str | None = None,
        visibility: str = "private",
        disk_format: str | None = None,
        container_format: str | None = None,
        min_disk: int = 0,
        min_ram: int = 0,
        protected: bool = False,
        os_hidden: bool = False,
        tags: Iterable[str] = (),
        properties: Mapping[str, str] | None = None,
        status: str = rules.QUEUED,
        owner: str | None = None,
    ) -> Image:
        """A new image owned by the caller's project (an admin may name another ``owner``).

        ``status="active"`` is for records whose data comes with them (a
        server's snapshot): it needs both formats, as glance needs them
        before it accepts data.
        """
        if not ctx.can_write:
            raise errors.PolicyForbidden(action="add_image")
        if status not in rules.INITIAL_STATUSES:
            raise errors.ImageBadRequest(
                reason=f"An image starts {' or '.join(rules.INITIAL_STATUSES)}, not {status!r}."
            )
        now = self.now()
        image = Image(
            id=rules.check_image_id(id) if id is not None else new_uuid(self.rng),
            name=rules.check_name(name),
            owner=_owner(ctx, owner),
            status=status,
            visibility=rules.check_visibility(visibility),
            disk_format=rules.check_disk_format(disk_format),
            container_format=rules.check_container_format(container_format),
            min_disk=rules.check_minimum(min_disk),
            min_ram=rules.check_minimum(min_ram),
            size=None,
            protected=rules.check_protected(protected),
            os_hidden=rules.check_os_hidden(os_hidden),
            tags=rules.check_tags(tags),
            properties=rules.check_properties(properties),
            created_at=now,
            updated_at=now,
        )
        if status == rules.ACTIVE:
            rules.check_can_activate(image.disk_format, image.container_format)
        if image.visibility == "public" and not ctx.is_admin:
            raise errors.PolicyForbidden(action="publicize_image")
        try:
            async with self.store.begin() as conn:
                if await repos.images.get(conn, image.id) is not None:
                    raise _duplicate(image.id)
                await repos.images.add(conn, image)
        except IntegrityError:
            raise _duplicate(image.id) from None
        return image

    async def get_image(self, ctx: RequestContext, image_id: str) -> Image:
        """The image, if the caller may see it; a private image of another project is NotFound."""
        async with self.store.begin() as conn:
            return await access.visible_image(conn, ctx, image_id)

    async def list_images(
        self,
        ctx: RequestContext,
        *,
        name: str | None = None,
        ids: Iterable[str] | None = None,
        visibility: str | None = None,
        status: str | None = None,
        owner: str | None = None,
        limit: int | None = None,
        marker: str | None = None,
        member_status: str = "accepted",
    ) -> list[Image]:
        """Images the caller may see, newest first (created_at, then id, descending).

        ``ids`` is glance's ``id=in:a,b``. ``marker`` is the last image of the
        previous page. Equality filters run in SQL; who-sees-what and paging
        run here, since they depend on the caller. ``member_status`` picks the
        shared images of other projects by the caller's membership (or "all").
        """
        filters = _column_filters(name=name, ids=ids, visibility=visibility, status=status, owner=owner)
        limit = rules.check_limit(limit)
        async with self.store.begin() as conn:
            found = await repos.images.find(conn, **filters)
            memberships = {member.image_id: member.status for member in
                           await repos.image_members.find(conn, member_id=ctx.project_id)}
            marker_image = None
            if marker is not None:
                try:
                    marker_image = await access.visible_image(conn, ctx, marker)
                except errors.ImageNotFound:
                    raise errors.ImageBadRequest(reason=f"No image found with ID {marker}") from None
        images = sorted(
            (image for image in found
             if rules.is_listed(image, project_id=ctx.project_id, is_admin=ctx.is_admin, visibility=visibility,
                                member_status=memberships.get(image.id), wanted_member_status=member_status)),
            key=rules.listing_key,
            reverse=True,
        )
        if marker_image is not None:
            after = rules.listing_key(marker_image)
            images = [image for image in images if rules.listing_key(image) < after]
        return images if limit is None else images[:limit]

    async def page_images(
        self,
        ctx: RequestContext,
        query: ListQuery,
        *,
        marker: Image | None = None,
        keep: Callable[[Image], bool] | None = None,
        name: str | None = None,
        ids: Iterable[str] | None = None,
        visibility: str | None = None,
        status: str | None = None,
        owner: str | None = None,
        member_status: str = "accepted",
    ) -> list[Image]:
        """One page of ``query`` (its order, limit and the ``marker`` image) of the images ``list_images``
        would list, read from the database in that order until the page is full: who-sees-what (the
        caller's memberships) and ``keep`` are tests on each image read, never a read of every image."""
        filters = _column_filters(name=name, ids=ids, visibility=visibility, status=status, owner=owner)
        async with self.store.begin() as conn:
            memberships = {member.image_id: member.status for member in
                           await repos.image_members.find(conn, member_id=ctx.project_id)}

            def listed(image: Image) -> bool:
                return rules.is_listed(image, project_id=ctx.project_id, is_admin=ctx.is_admin,
                                       visibility=visibility, member_status=memberships.get(image.id),
                                       wanted_member_status=member_status) and (keep is None or keep(image))

            query = query._replace(filters={**query.filters, **{key: value if isinstance(value, list) else [value]
                                                                for key, value in filters.items()}})
            return await repos.images.page(conn, query, marker=marker, keep=listed)

    async def update_image(self, ctx: RequestContext, image_id: str, **changes: Any) -> Image:
        """Change writable attributes. ``tags`` replaces the tag list;
        ``properties`` is merged, and a property set to None is removed."""
        for key in changes:
            if key == "owner" and ctx.is_admin:
                continue
            if key in rules.READONLY_ATTRIBUTES:
                raise errors.ReadOnlyAttribute(attribute=key)
            if key not in rules.WRITABLE_ATTRIBUTES:
                raise errors.ReservedAttribute(attribute=key)
        checked = _check_changes(changes)
        async with self.store.begin() as conn:
            image = await access.image_to_change(conn, ctx, image_id, "modify_image")
            if not checked:
                return image
            if checked.get("visibility") == "public" and image.visibility != "public" and not ctx.is_admin:
                raise errors.PolicyForbidden(action="publicize_image")
            for attribute in ("disk_format", "container_format"):
                if (attribute in checked and checked[attribute] != getattr(image, attribute)
                        and image.status not in rules.FORMAT_CHANGE_STATUSES):
                    raise errors.ImageForbidden(
                        reason=f"Attribute {attribute} can be only replaced for a queued image."
                    )
            if "properties" in checked:
                merged = {**image.properties, **checked["properties"]}
                checked["properties"] = {key: value for key, value in merged.items() if value is not None}
            updated = replace(image, **checked, updated_at=self.now())
            await repos.images.update(conn, image_id, **checked, updated_at=updated.updated_at)
        return updated

    async def delete_image(self, ctx: RequestContext, image_id: str) -> None:
        """Delete an image, its members and its data; a protected one stays (403) until protected is set false."""
        async with self.store.begin() as conn:
            image = await access.image_to_change(conn, ctx, image_id, "delete_image")
            if image.protected:
                raise errors.ProtectedImageDelete(image_id=image_id)
            await repos.image_members.delete_where(conn, image_id=image_id)
            await repos.images.delete(conn, image_id)
        # after the commit: an upload still under way finds the record gone and cleans up after itself
        self.files.delete(image_id)


def _owner(ctx: RequestContext, owner: str | None) -> str | None:
    if owner is None or owner == ctx.project_id:
        return ctx.project_id
    if not ctx.is_admin:
        raise errors.ImageForbidden(reason=f"You are not permitted to create images owned by '{owner}'.")
    return rules.check_owner(owner)


_CHECKS = {
    "owner": lambda value: rules.check_owner(value),
    "name": rules.check_name,
    "visibility": rules.check_visibility,
    "disk_format": rules.check_disk_format,
    "container_format": rules.check_container_format,
    "min_disk": rules.check_minimum,
    "min_ram": rules.check_minimum,
    "protected": rules.check_protected,
    "os_hidden": rules.check_os_hidden,
    "tags": rules.check_tags,
    "properties": lambda value: rules.check_properties(value, removable=True),
}


def _check_changes(changes: Mapping[str, Any]) -> dict[str, Any]:
    return {key: _CHECKS[key](value) for key, value in changes.items()}


def _column_filters(*, name: str | None, ids: Iterable[str] | None, visibility: str | None, status: str | None,
                    owner: str | None) -> dict[str, Any]:
    """The equality filters a list runs in the database."""
    rules.check_list_visibility(visibility)
    filters: dict[str, Any] = {}
    if name is not None:
        filters["name"] = name
    if ids is not None:
        filters["id"] = [ids] if isinstance(ids, str) else list(ids)
    if status is not None:
        filters["status"] = status
    if owner is not None:
        filters["owner"] = owner
    if visibility not in (None, "all"):
        filters["visibility"] = visibility
    return filters
