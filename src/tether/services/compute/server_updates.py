"""What changes a server without touching its machine: update (name, description, access IPs), lock and
unlock, metadata and tags. Each is one transaction; none moves the instance's state.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tether.domain import compute_states as vm
from tether.domain.compute import Instance
from tether.domain.errors import compute as ce
from tether.runtime.runtime import Runtime
from tether.services.compute import quotas, records
from tether.services.compute.instances import visible_instance
from tether.services.compute.server_action import refuse_if_locked
from tether.services.context import RequestContext
from tether.store import repos
from tether.store.database import Store, StoreConnection

MAX_TAGS = 50
MAX_TAG_LENGTH = 60
# nova's update_instance_metadata: only a settled server's metadata changes
_METADATA_STATES = (vm.ACTIVE, vm.PAUSED, vm.SUSPENDED, vm.STOPPED)
_UPDATABLE = ("name", "description", "access_ip_v4", "access_ip_v6", "disk_config", "hostname")


class MetadataItemNotFound(ce.ComputeNotFound):
    template = "Metadata item was not found"


class InstanceTagNotFound(ce.ComputeNotFound):
    template = "Instance {instance_id} has no tag '{tag}'"


def check_tag(tag: Any) -> str:
    if not isinstance(tag, str) or not 1 <= len(tag) <= MAX_TAG_LENGTH or "/" in tag or "," in tag:
        raise ce.ComputeBadRequest(reason=f"Invalid input for field/attribute tag. Value: {tag}. "
                                          "A tag is 1 to 60 characters, without '/' or ','.")
    return tag


def check_tags(tags: Any) -> list[str]:
    if not isinstance(tags, list):
        raise ce.ComputeBadRequest(reason=f"Invalid input for field/attribute tags. Value: {tags}. "
                                          f"{tags!r} is not of type 'array'")
    if len(tags) > MAX_TAGS:
        raise ce.ComputeBadRequest(reason=f"The number of tags exceeded the per-server limit {MAX_TAGS}")
    return list(dict.fromkeys(check_tag(tag) for tag in tags))


def check_metadata(metadata: Any) -> dict[str, str]:
    if not isinstance(metadata, dict):
        raise ce.ComputeBadRequest(reason="Invalid input for field/attribute metadata.")
    for key, value in metadata.items():
        if not isinstance(key, str) or not 1 <= len(key) <= 255:
            raise ce.ComputeBadRequest(reason=f"Invalid input for field/attribute metadata. Value: {key!r}.")
        if not isinstance(value, str) or len(value) > 255:
            raise ce.ComputeBadRequest(reason=f"Invalid input for field/attribute {key}. Value: {value!r}.")
    return dict(metadata)


@dataclass(eq=False)
class ServerUpdates:
    store: Store
    rt: Runtime

    async def update_server(self, ctx: RequestContext, uuid: str, **changes: Any) -> Instance:
        """PUT /servers/{id}: ``changes`` among name, description, access_ip_v4/6, disk_config, hostname."""
        unknown = set(changes) - set(_UPDATABLE)
        if unknown:
            raise ce.ComputeBadRequest(reason=f"Invalid input for field/attribute {sorted(unknown)[0]}.")
        return await self._change(ctx, uuid, "update", lambda _instance: changes, check_lock=False)

    # -- lock ---------------------------------------------------------------------

    async def lock(self, ctx: RequestContext, uuid: str, reason: str | None = None) -> Instance:
        async with self.store.begin() as conn:
            instance = await visible_instance(conn, ctx, uuid)
            if not ctx.can_write:
                raise ce.ComputeForbidden(action="os_compute_api:os-lock-server:lock")
            # nova: the owner's lock, or an admin's on someone else's server (which only an admin lifts)
            locked_by = "owner" if instance.project_id == ctx.project_id else "admin"
            await repos.instances.update(conn, uuid, locked_by=locked_by, locked_reason=reason,
                                         updated_at=self.rt.now())
            await records.start_action(conn, ctx, uuid, "lock", self.rt.now(), None, project_id=instance.project_id)
            instance.locked_by, instance.locked_reason = locked_by, reason
        return instance

    async def unlock(self, ctx: RequestContext, uuid: str) -> Instance:
        async with self.store.begin() as conn:
            instance = await visible_instance(conn, ctx, uuid)
            if not ctx.can_write:
                raise ce.ComputeForbidden(action="os_compute_api:os-lock-server:unlock")
            expected = "owner" if instance.project_id == ctx.project_id else "admin"
            if instance.locked_by not in (None, expected) and not ctx.is_admin:
                raise ce.ComputeForbidden(action="os_compute_api:os-lock-server:unlock:unlock_override")
            await repos.instances.update(conn, uuid, locked_by=None, locked_reason=None, updated_at=self.rt.now())
            await records.start_action(conn, ctx, uuid, "unlock", self.rt.now(), None,
                                       project_id=instance.project_id)
            instance.locked_by = instance.locked_reason = None
        return instance

    async def change_password(self, ctx: RequestContext, uuid: str) -> None:
        """Neither fake driver can set a guest's password (nova's libvirt needs a guest agent, ironic has no
        way at all): nova's answer to the driver's NotImplementedError, with the action recorded as failed."""
        if not ctx.can_write:
            raise ce.ComputeForbidden(action="os_compute_api:os-admin-password")
        declined = ce.ComputeNotImplemented(reason="Unable to set password on instance")
        now = self.rt.now()
        async with self.store.begin() as conn:
            instance = await visible_instance(conn, ctx, uuid)
            refuse_if_locked(ctx, instance)
            _require_state(instance, "changePassword", (vm.ACTIVE,))
            await records.start_action(conn, ctx, uuid, "changePassword", now, "compute_set_admin_password",
                                       project_id=instance.project_id)
            await records.finish_action(conn, ctx.request_id, uuid, now, error=declined, instance=instance)
        raise declined

    async def inject_network_info(self, ctx: RequestContext, uuid: str) -> None:
        """os-admin-actions injectNetworkInfo: the fake guests read their network from the port, so there is
        nothing to write into them; the action is recorded as nova records it."""
        if not ctx.is_admin:
            raise ce.ComputeForbidden(action="os_compute_api:os-admin-actions:inject_network_info")
        now = self.rt.now()
        async with self.store.begin() as conn:
            instance = await visible_instance(conn, ctx, uuid)
            await records.start_action(conn, ctx, uuid, "injectNetworkInfo", now, "compute_inject_network_info",
                                       project_id=instance.project_id)
            await records.finish_action(conn, ctx.request_id, uuid, now, instance=instance)

    # -- metadata -----------------------------------------------------------------

    async def metadata(self, ctx: RequestContext, uuid: str) -> dict[str, str]:
        async with self.store.begin() as conn:
            return dict((await visible_instance(conn, ctx, uuid)).metadata or {})

    async def metadata_item(self, ctx: RequestContext, uuid: str, key: str) -> str:
        metadata = await self.metadata(ctx, uuid)
        if key not in metadata:
            raise MetadataItemNotFound()
        return metadata[key]

    async def set_metadata(self, ctx: RequestContext, uuid: str, metadata: Any, *, replace: bool) -> dict[str, str]:
        """PUT (``replace``) or POST (merge) /servers/{id}/metadata; the whole metadata after."""
        given = check_metadata(metadata)
        async with self.store.begin() as conn:
            current = await visible_instance(conn, ctx, uuid)
            after = given if replace else {**(current.metadata or {}), **given}
            # nova's metadata_items quota on what the server would have (a 403)
            await quotas.check_metadata(conn, current.project_id, current.user_id, len(after))
        instance = await self._change(
            ctx, uuid, "update metadata",
            lambda current: {"metadata": given if replace else {**(current.metadata or {}), **given}},
            states=_METADATA_STATES)
        return dict(instance.metadata)

    async def delete_metadata_item(self, ctx: RequestContext, uuid: str, key: str) -> None:
        def without(current: Instance) -> dict[str, Any]:
            if key not in (current.metadata or {}):
                raise MetadataItemNotFound()
            return {"metadata": {k: v for k, v in current.metadata.items() if k != key}}
        await self._change(ctx, uuid, "delete metadata", without, states=_METADATA_STATES)

    # -- tags -------------------------------------------------------------------------

    async def tags(self, ctx: RequestContext, uuid: str) -> list[str]:
        async with self.store.begin() as conn:
            return list((await visible_instance(conn, ctx, uuid)).tags or [])

    async def has_tag(self, ctx: RequestContext, uuid: str, tag: str) -> None:
        if tag not in await self.tags(ctx, uuid):
            raise InstanceTagNotFound(instance_id=uuid, tag=tag)

    async def set_tags(self, ctx: RequestContext, uuid: str, tags: Any) -> list[str]:
        wanted = check_tags(tags)
        return list((await self._change(ctx, uuid, "update tags", lambda _: {"tags": wanted},
                                        check_lock=False)).tags)

    async def add_tag(self, ctx: RequestContext, uuid: str, tag: str) -> bool:
        """True if the tag is new (nova's 201), False if the server had it (204)."""
        check_tag(tag)
        added: list[bool] = []

        def adding(current: Instance) -> dict[str, Any]:
            tags = list(current.tags or [])
            if tag in tags:
                added.append(False)
                return {}
            if len(tags) >= MAX_TAGS:
                raise ce.ComputeBadRequest(reason=f"The number of tags exceeded the per-server limit {MAX_TAGS}")
            added.append(True)
            return {"tags": [*tags, tag]}
        await self._change(ctx, uuid, "update tags", adding, check_lock=False)
        return added[0]

    async def delete_tag(self, ctx: RequestContext, uuid: str, tag: str) -> None:
        def removing(current: Instance) -> dict[str, Any]:
            if tag not in (current.tags or []):
                raise InstanceTagNotFound(instance_id=uuid, tag=tag)
            return {"tags": [t for t in current.tags if t != tag]}
        await self._change(ctx, uuid, "update tags", removing, check_lock=False)

    async def delete_tags(self, ctx: RequestContext, uuid: str) -> None:
        await self._change(ctx, uuid, "update tags", lambda _: {"tags": []}, check_lock=False)

    # -- one change, in one transaction ------------------------------------------------

    async def _change(self, ctx: RequestContext, uuid: str, action: str, changes_for: Any, *,
                      states: tuple[str, ...] | None = None, check_lock: bool = True) -> Instance:
        if not ctx.can_write:
            raise ce.ComputeForbidden(action=f"os_compute_api:servers:{action.replace(' ', '_')}")
        async with self.store.begin() as conn:
            instance = await visible_instance(conn, ctx, uuid)
            if check_lock:
                refuse_if_locked(ctx, instance)
            _require_state(instance, action, states)
            changes = changes_for(instance)
            if changes:
                await _write(conn, instance, changes, self.rt.now())
        return instance


def _require_state(instance: Instance, action: str, states: tuple[str, ...] | None) -> None:
    if states is None:
        return
    if instance.vm_state not in states:
        raise ce.InstanceInvalidState(action=action, instance_uuid=instance.uuid, attr="vm_state",
                                      state=instance.vm_state)
    if instance.task_state is not None:
        raise ce.InstanceInvalidState(action=action, instance_uuid=instance.uuid, attr="task_state",
                                      state=instance.task_state)


async def _write(conn: StoreConnection, instance: Instance, changes: dict[str, Any], now: float) -> None:
    await repos.instances.update(conn, instance.uuid, updated_at=now, **changes)
    for name, value in changes.items():
        setattr(instance, name, value)
    instance.updated_at = now
