"""nova's simple tenant usage: how many hours each server ran in a period, and what that adds up to."""

from __future__ import annotations

from dataclasses import dataclass

from tether.domain.compute import Flavor, Instance


@dataclass(frozen=True)
class ServerUsage:
    instance: Instance
    flavor: Flavor | None
    hours: float


def hours_in(instance: Instance, start: float, stop: float) -> float:
    """nova's _hours_for: from its launch (or the period's start) to its end (or the period's stop)."""
    launched, ended = instance.launched_at, instance.deleted_at if instance.deleted else None
    if launched is None or (ended is not None and ended < start) or launched > stop:
        return 0.0
    until = min(stop, ended) if ended is not None else stop
    return (until - max(launched, start)) / 3600.0


def active_in(instance: Instance, start: float, stop: float) -> bool:
    """nova's instance_get_active_by_window_joined: not ended before the period, launched before its end."""
    ended = instance.deleted_at if instance.deleted else None
    return (ended is None or ended > start) and instance.launched_at is not None and instance.launched_at < stop
