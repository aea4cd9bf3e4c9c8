"""Where each service's API lives on Tether's one port, and the router its modules add routes to.

Every module's router carries its service's prefix from the start, so that
its routes are final when they are made and the application takes them as
they are (see ``app``).
"""

from __future__ import annotations

from fastapi import APIRouter

from tether.api.direct_route import DirectRoute

PREFIXES = {
    "identity": "/identity",
    "compute": "/compute/v2.1",
    "network": "/network/v2.0",
    "image": "/image/v2",
    "baremetal": "/baremetal/v1",
    "orchestration": "/orchestration/v1",
}


def router(service: str) -> APIRouter:
    """A router for routes under ``service``'s prefix."""
    return APIRouter(prefix=PREFIXES[service], tags=[service], route_class=DirectRoute)


def roots(service: str) -> APIRouter:
    """A router for ``service``'s version documents, above its prefix (/compute, /compute/v2.1)."""
    return APIRouter(tags=["discovery", service], route_class=DirectRoute)
