"""A node's management through its fake BMC: boot device, console, and its interfaces' validation.

After ironic's fake-hardware: the boot device lives in the BMC (the hardware's
own state, not the database), the console is a flag on the node whose
connection information names no real endpoint, and validation reports, per
interface, what ironic's conductor reports for the implementation chosen.
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass
from typing import Any

from tether.domain.baremetal import Node
from tether.domain.baremetal_drivers import BOOT_DEVICES, INTERFACES, RAID_CONFIG_SCHEMA
from tether.domain.errors import baremetal as be
from tether.drivers.hardware import FakeHardware
from tether.runtime.runtime import Runtime
from tether.services.baremetal.access import require_admin
from tether.services.baremetal.lookup import NodeLookup
from tether.services.baremetal.node_lock import NodeLock
from tether.services.context import RequestContext
from tether.store import repos
from tether.store.database import Store

# The interfaces ironic's validate reports on (its non_vendor_interfaces).
VALIDATED = tuple(kind for kind in INTERFACES if kind != "vendor")


def unsupported(node: Node, kind: str) -> str | None:
    """Why ``kind`` cannot work on ``node`` (ironic's noop implementations refuse), or None."""
    if str(getattr(node, f"{kind}_interface")).startswith("no-"):
        return be.UnsupportedDriverExtension(driver=node.driver, extension=kind).message
    return None


def _check_raid_config(config: dict[str, Any]) -> None:
    """ironic's raid.validate_configuration: its schema, then at most one root volume."""
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import best_match

    error = best_match(Draft202012Validator(RAID_CONFIG_SCHEMA).iter_errors(config))
    if error is not None:
        raise be.InvalidParameterValue(err=f"RAID config validation error: {error.message}")
    roots = sum(bool(disk.get("is_root_volume")) for disk in config["logical_disks"])
    if roots > 1:
        raise be.InvalidParameterValue(err=f"Raid config cannot have more than one root volume. {roots} root "
                                           "volumes were specified")


@dataclass(eq=False)
class Management:
    store: Store
    rt: Runtime
    _: KW_ONLY
    hardware: FakeHardware
    lookup: NodeLookup
    lock: NodeLock

    # -- boot device ---------------------------------------------------------------

    async def get_boot_device(self, ctx: RequestContext, ident: str) -> dict[str, Any]:
        require_admin(ctx, "baremetal:node:get_boot_device")
        node = await self.lookup.read(ident)
        device, persistent = self.hardware.boot_device(node.uuid)
        return {"boot_device": device, "persistent": persistent}

    async def supported_boot_devices(self, ctx: RequestContext, ident: str) -> list[str]:
        require_admin(ctx, "baremetal:node:get_boot_device")
        await self.lookup.read(ident)
        return list(BOOT_DEVICES)

    async def set_boot_device(self, ctx: RequestContext, ident: str, device: str, persistent: bool) -> None:
        require_admin(ctx, "baremetal:node:set_boot_device")
        async with self.lock.locked(ident) as node:
            if device not in BOOT_DEVICES:
                raise be.InvalidParameterValue(err=f"Invalid boot device {device} specified.")
            self.hardware.set_boot_device(node.uuid, device, persistent)

    # -- console -------------------------------------------------------------------

    async def get_console(self, ctx: RequestContext, ident: str) -> dict[str, Any]:
        require_admin(ctx, "baremetal:node:get_console")
        node = await self.lookup.read(ident)
        reason = unsupported(node, "console")
        if reason is not None:
            raise be.UnsupportedDriverExtension(reason)
        if not node.console_enabled:
            return {"console_enabled": False, "console_info": None}
        # fake-hardware's console has no endpoint: its URL says so rather than pointing anywhere.
        return {"console_enabled": True, "console_info": {"type": "fake", "url": f"fake://console/{node.uuid}"}}

    async def set_console(self, ctx: RequestContext, ident: str, enabled: bool) -> None:
        require_admin(ctx, "baremetal:node:set_console_state")
        async with self.lock.locked(ident) as node:
            reason = unsupported(node, "console")
            if reason is not None:
                raise be.UnsupportedDriverExtension(reason)
            if node.console_enabled != enabled:
                async with self.store.begin() as conn:
                    await repos.nodes.update(conn, node.uuid, console_enabled=enabled, updated_at=self.rt.now())

    # -- RAID ----------------------------------------------------------------------

    async def set_target_raid_config(self, ctx: RequestContext, ident: str, config: dict[str, Any]) -> None:
        """Keep the RAID layout an operator asks for; an empty one clears it (ironic's set_target_raid_config)."""
        require_admin(ctx, "baremetal:node:set_raid_state")
        async with self.lock.locked(ident) as node:
            reason = unsupported(node, "raid")
            if reason is not None:
                raise be.UnsupportedDriverExtension(reason)
            if config:
                _check_raid_config(config)
            async with self.store.begin() as conn:
                await repos.nodes.update(conn, node.uuid, target_raid_config=config, updated_at=self.rt.now())

    # -- validate ------------------------------------------------------------------

    async def validate(self, ctx: RequestContext, ident: str) -> dict[str, dict[str, Any]]:
        require_admin(ctx, "baremetal:node:validate")
        node = await self.lookup.read(ident)
        results: dict[str, dict[str, Any]] = {}
        for kind in VALIDATED:
            reason = unsupported(node, kind)
            results[kind] = {"result": True} if reason is None else {"result": False, "reason": reason}
        return results
