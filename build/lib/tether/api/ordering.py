"""Ordering helpers shared by the list endpoints that sort in memory."""

from __future__ import annotations

from typing import Any


def compare_nullable(left: Any, right: Any) -> int:
    """Three-way compare where None sorts first, as NULL does in the services' MySQL."""
    if left == right:
        return 0
    if left is None:
        return -1
    if right is None:
        return 1
    return -1 if left < right else 1
