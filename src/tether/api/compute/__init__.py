"""Nova's API (/compute/v2.1): one small module per resource, assembled on ``router``."""

from fastapi import APIRouter

from tether.api.compute import actions, diagnostics, events, flavors, hypervisors, interfaces, servers

router = APIRouter(prefix="/compute/v2.1", tags=["compute"])
for _module in (servers, interfaces, actions, diagnostics, events, flavors, hypervisors):
    router.include_router(_module.router)
