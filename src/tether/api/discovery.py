"""Version discovery documents, shaped as keystoneauth and the clients read them."""

from __future__ import annotations

from typing import Any

from tether.api import versions

UPDATED = "2026-01-01T00:00:00Z"


def _link(href: str) -> list[dict[str, str]]:
    return [{"rel": "self", "href": href}]


def identity_v3(base: str) -> dict[str, Any]:
    return {"id": "v3.14", "status": "stable", "updated": UPDATED,
            "media-types": [{"base": "application/json", "type": "application/vnd.openstack.identity-v3+json"}],
            "links": _link(f"{base}/identity/v3/")}


def compute_v21(base: str) -> dict[str, Any]:
    return {"id": "v2.1", "status": "CURRENT", "updated": UPDATED,
            "version": versions.fmt(versions.COMPUTE_MAX), "min_version": versions.fmt(versions.COMPUTE_MIN),
            "links": _link(f"{base}/compute/v2.1/")}


def compute_v20(base: str) -> dict[str, Any]:
    return {"id": "v2.0", "status": "SUPPORTED", "updated": UPDATED, "version": "", "min_version": "",
            "links": _link(f"{base}/compute/v2/")}


def network_v20(base: str) -> dict[str, Any]:
    return {"id": "v2.0", "status": "CURRENT", "links": _link(f"{base}/network/v2.0/")}


def image_v2(base: str) -> dict[str, Any]:
    return {"id": "v2.16", "status": "CURRENT", "links": _link(f"{base}/image/v2/")}


def baremetal_v1(base: str) -> dict[str, Any]:
    return {"id": "v1", "status": "CURRENT", "min_version": versions.fmt(versions.BAREMETAL_MIN),
            "version": versions.fmt(versions.BAREMETAL_MAX), "links": _link(f"{base}/baremetal/v1/")}


def orchestration_v1(base: str) -> dict[str, Any]:
    return {"id": "v1.0", "status": "CURRENT", "links": _link(f"{base}/orchestration/v1/")}
