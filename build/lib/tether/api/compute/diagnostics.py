"""GET /servers/{id}/diagnostics (admin): the guest as its hypervisor driver reports it.

The NICs listed are the driver's guest interfaces (``virsh domiflist``), not
the info cache: a device whose port is gone (seed 004's zombie interface)
shows up here even when the cache no longer mentions it. Tether's driver
keeps no traffic counters, so they are null. Bare-metal servers get nova's
answer for the ironic driver: 501, it has no diagnostics.
"""

from __future__ import annotations

from typing import Any

from fastapi import Depends, Request
from fastapi.responses import JSONResponse

from tether.api import paths
from tether.api.deps import caller, cloud
from tether.api.versions import Microversion
from tether.domain import compute_states as vm
from tether.domain.errors import compute as ce
from tether.services.compute.queries import GuestView
from tether.services.context import RequestContext

router = paths.router("compute")

POWER_STATE_NAMES = {0: "pending", 1: "running", 3: "paused", 4: "shutdown", 6: "crashed", 7: "suspended"}
NIC_COUNTERS = ("rx_octets", "rx_errors", "rx_drop", "rx_packets", "rx_rate",
                "tx_octets", "tx_errors", "tx_drop", "tx_packets", "tx_rate")
LEGACY_NIC_COUNTERS = ("rx", "rx_drop", "rx_errors", "rx_packets", "tx", "tx_drop", "tx_errors", "tx_packets")


class FeatureNotSupported(ce.ComputeError):
    status = 501
    template = "The requested functionality is not supported."


@router.get("/servers/{server_id}/diagnostics")
async def diagnostics(server_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> JSONResponse:
    version: Microversion = request.state.microversion
    compute = cloud(request).compute
    guest = await compute.guest_view(ctx, server_id)
    instance = guest.instance
    if not instance.host:
        raise ce.ComputeConflict(reason=f"Instance {instance.uuid} is not ready")
    if instance.is_baremetal:
        raise FeatureNotSupported()
    if not guest.has_domain or instance.power_state != vm.RUNNING:
        state = POWER_STATE_NAMES.get(instance.power_state if guest.has_domain else vm.NOSTATE, "pending")
        raise ce.ComputeConflict(reason=f"Cannot 'get_diagnostics' instance {instance.uuid} while it is in "
                                        f"power state {state}")
    if version.at_least("2.48"):
        return JSONResponse(_diagnostics(guest, compute.now()))
    return JSONResponse(_legacy_diagnostics(guest))


def _diagnostics(guest: GuestView, now: float) -> dict[str, Any]:
    instance, flavor = guest.instance, guest.flavor
    vcpus = flavor.vcpus if flavor is not None else 0
    nics = [{"mac_address": interface.mac, **dict.fromkeys(NIC_COUNTERS)} for interface in guest.interfaces]
    return {
        "state": "running",
        "driver": "libvirt",  # the fake driver models libvirt's guests (tap devices, domiflist)
        "hypervisor": "fake",
        "hypervisor_os": None,
        "uptime": int(now - instance.launched_at) if instance.launched_at else None,
        "config_drive": False,
        "num_cpus": vcpus,
        "num_nics": len(nics),
        "num_disks": 0,
        "cpu_details": [{"id": index, "time": None, "utilisation": None} for index in range(vcpus)],
        "disk_details": [],
        "nic_details": nics,
        "memory_details": {"maximum": flavor.ram if flavor is not None else None, "used": None},
    }


def _legacy_diagnostics(guest: GuestView) -> dict[str, Any]:
    """Before 2.48 each driver had its own shape; this is libvirt's, keyed by tap device."""
    body: dict[str, Any] = {"memory": guest.flavor.ram * 1024 if guest.flavor is not None else None}
    for interface in guest.interfaces:
        for counter in LEGACY_NIC_COUNTERS:
            body[f"{interface.device}_{counter}"] = None
    return body
