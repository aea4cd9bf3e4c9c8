"""Neutron's API (/network/v2.0): networks, subnets, ports and the extensions Tether has."""

from __future__ import annotations

from typing import Any

from fastapi import Depends, Request

from tether.api import paths
from tether.api.deps import caller
from tether.api.network import agents, extensions, quotas, router_interfaces, tag_routes
from tether.api.network.collections import COLLECTIONS
from tether.api.network.routes import add_routes
from tether.services.context import RequestContext

router = paths.router("network")


@router.get("", include_in_schema=False)
@router.get("/")
async def resources(request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    """The v2.0 root: the collections it serves."""
    base = f"{request.app.state.base_url}{paths.PREFIXES['network']}"
    return {"resources": [
        {"name": c.resource.singular, "collection": c.resource.plural,
         "links": [{"href": f"{base}/{c.resource.plural.replace('_', '-')}", "rel": "self"}]}
        for c in COLLECTIONS
    ]}


for collection in COLLECTIONS:
    add_routes(router, collection)

ROUTERS = (router, extensions.router, tag_routes.router, agents.router, quotas.router, router_interfaces.router)
