"""/os-instance_usage_audit_log (admin): the instance usage audit of each compute host for the last
completed month, as nova answers it when its ``instance_usage_audit`` periodic task is off (its
default): every host listed, none run, no log.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from fastapi import Depends, Request

from tether.api import paths
from tether.api.compute.bodies import fail
from tether.api.deps import caller, cloud
from tether.domain.errors import compute as ce
from tether.services.context import RequestContext

router = paths.router("compute")


def _last_completed_month(before: datetime) -> tuple[datetime, datetime]:
    """nova's utils.last_completed_audit_period with its default unit, a month."""
    end = before.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    begin = end.replace(year=end.year - 1, month=12) if end.month == 1 else end.replace(month=end.month - 1)
    return begin, end


async def _audit(request: Request, ctx: RequestContext, action: str, before: datetime) -> dict[str, Any]:
    if not ctx.is_admin:
        raise ce.ComputeForbidden(action=f"os_compute_api:os-instance-usage-audit-log:{action}")
    hosts = sorted({hypervisor.hostname for hypervisor in
                    await cloud(request).compute.compute_services(ctx.internal(ctx.project_id))})
    begin, end = _last_completed_month(before)
    return {"period_beginning": str(begin), "period_ending": str(end), "num_hosts": len(hosts),
            "num_hosts_done": 0, "num_hosts_running": 0, "num_hosts_not_run": len(hosts), "hosts_not_run": hosts,
            "total_instances": 0, "total_errors": 0,
            "overall_status": f"{'ALL' if not hosts else f'0 of {len(hosts)}'} hosts done. 0 errors.", "log": {}}


@router.get("/os-instance_usage_audit_log")
async def audit_logs(request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    now = datetime.now(UTC).replace(tzinfo=None)
    return {"instance_usage_audit_logs": await _audit(request, ctx, "list", now)}


@router.get("/os-instance_usage_audit_log/{before}")
async def audit_log_before(before: str, request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    try:
        moment = datetime.strptime(before, "%Y-%m-%d %H:%M:%S.%f" if "." in before else "%Y-%m-%d %H:%M:%S")
    except ValueError:
        if not ctx.is_admin:
            raise ce.ComputeForbidden(action="os_compute_api:os-instance-usage-audit-log:show") from None
        raise fail(f"Invalid timestamp for date {before}") from None
    return {"instance_usage_audit_log": await _audit(request, ctx, "show", moment)}
