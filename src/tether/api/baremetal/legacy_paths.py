"""Paths ironic still answers for old clients, rewritten before routing.

- A path without a version (``/baremetal/nodes/...``, where the bookmark links
  point) is served as the default version's, as ironic's RootController routes it.
- Before 1.91 a trailing ``.json`` is dropped, as ironic's JsonExtensionMiddleware
  drops it; the request remembers it (``state["json_suffix"]``) so that a lookup
  that fails without it can try the name with it.
"""

from __future__ import annotations

from typing import Any

from tether.api.paths import PREFIXES

_ROOT = PREFIXES["baremetal"].rsplit("/", 1)[0] + "/"  # /baremetal/
_VERSIONED = PREFIXES["baremetal"] + "/"  # /baremetal/v1/
_HEADER = b"x-openstack-ironic-api-version"
DOT_JSON_REMOVED = 91  # ironic's MINOR_91_DOT_JSON


def _minor(scope: dict[str, Any]) -> int | None:
    for name, value in scope.get("headers", ()):
        if name.lower() == _HEADER:
            major, _, minor = value.decode("latin-1").strip().partition(".")
            return int(minor) if major == "1" and minor.isdigit() else None
    return None


def had_json_suffix(scope: dict[str, Any]) -> bool:
    """Whether the request's path ended in a ``.json`` that ``rewrite`` dropped."""
    return bool(scope.get("state", {}).get("json_suffix"))


def rewrite(scope: dict[str, Any]) -> dict[str, Any]:
    path: str = scope["path"]
    if path.startswith(_ROOT) and path != _ROOT and not path.startswith(_VERSIONED) \
            and path.rstrip("/") != _VERSIONED.rstrip("/"):
        path = _VERSIONED + path[len(_ROOT):]
    suffix = False
    if path.startswith(_VERSIONED) and path.rstrip("/").endswith(".json"):
        minor = _minor(scope)
        if minor is not None and minor < DOT_JSON_REMOVED:
            path, suffix = path.rstrip("/")[:-5], True
    if path == scope["path"]:
        return scope
    scope = dict(scope, path=path, raw_path=path.encode())
    scope.setdefault("state", {})["json_suffix"] = suffix
    return scope


class LegacyPaths:
    """The bare-metal application, behind the rewrites above."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            scope = rewrite(scope)
        await self.app(scope, receive, send)
