"""The version documents at each service's root, where the clients discover them."""

from __future__ import annotations

from typing import Any

from fastapi import Request
from fastapi.responses import JSONResponse

from tether.api import discovery, paths, versions

# One router per service: each service's application serves its own root documents.
compute = paths.roots("compute")
network = paths.roots("network")
image = paths.roots("image")
baremetal = paths.roots("baremetal")
orchestration = paths.roots("orchestration")


def _base(request: Request) -> str:
    return request.app.state.base_url


@compute.get("/compute")
@compute.get("/compute/", include_in_schema=False)
async def compute_root(request: Request) -> dict[str, Any]:
    return {"versions": [discovery.compute_v20(_base(request)), discovery.compute_v21(_base(request))]}


@compute.get("/compute/v2")
@compute.get("/compute/v2/", include_in_schema=False)
async def compute_legacy_version(request: Request) -> dict[str, Any]:
    """The v2.0 document the version list links to (nova's legacy v2 endpoint answers it too)."""
    return {"version": discovery.compute_v20(_base(request))}


@compute.get("/compute/v2.1")
@compute.get("/compute/v2.1/", include_in_schema=False)
async def compute_version(request: Request) -> dict[str, Any]:
    return {"version": discovery.compute_v21(_base(request))}


@network.get("/network")
@network.get("/network/", include_in_schema=False)
async def network_root(request: Request) -> dict[str, Any]:
    return {"versions": [discovery.network_v20(_base(request))]}


@image.get("/image")
@image.get("/image/", include_in_schema=False)
async def image_root(request: Request) -> JSONResponse:
    return JSONResponse({"versions": [discovery.image_v2(_base(request))]}, status_code=300)


@baremetal.get("/baremetal")
@baremetal.get("/baremetal/", include_in_schema=False)
async def baremetal_root(request: Request) -> dict[str, Any]:
    v1 = discovery.baremetal_v1(_base(request))
    return {"name": "OpenStack Ironic API", "description": "Tether's bare-metal service, speaking ironic's API.",
            "default_version": v1, "versions": [v1]}


@baremetal.get("/baremetal/v1")
@baremetal.get("/baremetal/v1/", include_in_schema=False)
async def baremetal_v1(request: Request) -> dict[str, Any]:
    base = _base(request)
    links = {name: [{"href": f"{base}/baremetal/v1/{name}/", "rel": "self"}]
             for name in ("nodes", "ports", "portgroups", "chassis", "drivers", "allocations", "conductors")}
    return {"id": "v1", "version": discovery.baremetal_v1(base),
            "media_types": [{"base": "application/json", "type": "application/vnd.openstack.ironic.v1+json"}],
            "links": [{"href": f"{base}/baremetal/v1/", "rel": "self"}], **links,
            "min_version": versions.fmt(versions.BAREMETAL_MIN), "max_version": versions.fmt(versions.BAREMETAL_MAX)}


@orchestration.get("/orchestration")
@orchestration.get("/orchestration/", include_in_schema=False)
async def orchestration_root(request: Request) -> JSONResponse:
    # heat answers its root with 300 Multiple Choices, as glance does
    return JSONResponse({"versions": [discovery.orchestration_v1(_base(request))]}, status_code=300)
