"""Events from the network service (os-server-external-events).

The in-process notifier and the HTTP API both deliver them here. Each is
validated as nova validates it, then only says which instance to look at:
a build waiting on its ports hears vif-plugged, and the port-deleted event
and network-changed hand over to ``NetworkSync``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tether.domain.compute import Instance
from tether.domain.errors import compute as ce
from tether.domain.ids import is_uuid_like
from tether.runtime.runtime import Runtime
from tether.services.compute.instances import Instances
from tether.services.compute.network_sync import NetworkSync
from tether.services.context import RequestContext

EVENT_NAMES = ("network-vif-plugged", "network-vif-unplugged", "network-vif-deleted", "network-changed")
EVENT_STATUSES = ("failed", "completed", "in-progress")


@dataclass(eq=False)
class ExternalEvents:
    rt: Runtime
    instances: Instances
    sync: NetworkSync

    async def external_events(self, ctx: RequestContext, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Nova's os-server-external-events: validate all, then accept each (code 200/404/422)."""
        if not (ctx.is_admin or "service" in ctx.roles):
            raise ce.ComputeForbidden(action="os_compute_api:os-server-external-events:create")
        if not isinstance(events, list) or not events:
            raise ce.ComputeBadRequest(reason="Invalid input for field/attribute events.")
        for event in events:
            _validate_event(event)
        results = []
        for event in events:
            result = {"server_uuid": event["server_uuid"], "name": event["name"],
                      "status": event.get("status", "completed")}
            if "tag" in event:
                result["tag"] = event["tag"]
            instance = await self.instances.live(event["server_uuid"])
            if instance is None:
                result.update(code=404, status="failed")
            elif instance.host is None:
                result.update(code=422, status="failed")
            else:
                result["code"] = 200
                self._dispatch(instance, event)
            results.append(result)
        return results

    def _dispatch(self, instance: Instance, event: dict[str, Any]) -> None:
        name, port_id = event["name"], event.get("tag", "")
        self.rt.note(f"event {name} for {instance.name} port {port_id[:8]}")
        if name in ("network-vif-plugged", "network-vif-unplugged"):
            # Builds wait on this key and re-read the ports; no lock, or a build could never hear it.
            self.rt.notify(("instance", instance.uuid))
        elif name == "network-vif-deleted":
            self.rt.spawn(self.sync.vif_deleted(instance.uuid, port_id), name=f"compute.vif_deleted:{port_id[:8]}")
        elif name == "network-changed":
            self.rt.spawn(self.sync.refresh(instance.uuid), name=f"compute.refresh:{instance.name}")


def _validate_event(event: Any) -> None:
    if not isinstance(event, dict):
        raise ce.ComputeBadRequest(reason="Invalid input for field/attribute events.")
    unknown = set(event) - {"server_uuid", "name", "status", "tag"}
    if unknown:
        # jsonschema's words, as nova's validator passes them on
        names, verb = ", ".join(repr(name) for name in sorted(unknown)), "was" if len(unknown) == 1 else "were"
        raise ce.ComputeBadRequest(reason=f"Additional properties are not allowed ({names} {verb} unexpected)")
    if not is_uuid_like(event.get("server_uuid")):
        raise ce.ComputeBadRequest(reason="Invalid input for field/attribute server_uuid.")
    if event.get("name") not in EVENT_NAMES:
        raise ce.ComputeBadRequest(reason=f"Invalid input for field/attribute name. Value: {event.get('name')}.")
    if event.get("status", "completed") not in EVENT_STATUSES:
        raise ce.ComputeBadRequest(reason="Invalid input for field/attribute status.")
    tag = event.get("tag")
    if tag is not None and (not isinstance(tag, str) or len(tag) > 255):
        raise ce.ComputeBadRequest(reason="Invalid input for field/attribute tag.")
