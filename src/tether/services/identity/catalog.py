"""The service catalog a token carries: where each Tether API lives.

A pure function of the base URL and the project: ids are derived from the
service type and interface alone, so they stay the same across restarts and
base URLs.
"""

from __future__ import annotations

import uuid
from typing import Any

REGION = "RegionOne"
INTERFACES = ("public", "internal", "admin")

_ID_NAMESPACE = uuid.UUID("5f0c9a8e-3b1d-4c55-9a63-7d1e2f4b6a10")

# (type, name, path under the base URL); "{project_id}" is filled per token.
SERVICES: tuple[tuple[str, str, str], ...] = (
    ("identity", "keystone", "/identity"),
    ("compute", "nova", "/compute/v2.1"),
    ("network", "neutron", "/network"),
    ("image", "glance", "/image"),
    ("baremetal", "ironic", "/baremetal"),
    ("orchestration", "heat", "/orchestration/v1/{project_id}"),
)


def stable_id(*parts: str) -> str:
    return uuid.uuid5(_ID_NAMESPACE, ":".join(parts)).hex


def build_catalog(base_url: str, project_id: str | None) -> list[dict[str, Any]]:
    """Keystone v3 catalog entries for every Tether service.

    Each endpoint carries both ``region`` (Tempest reads it) and
    ``region_id`` (keystoneauth prefers it). A service whose URL needs a
    project is left out of a token without one, as keystone leaves out
    endpoints whose URL template it cannot fill.
    """
    base = base_url.rstrip("/")
    entries = []
    for service_type, name, path in SERVICES:
        if "{project_id}" in path and project_id is None:
            continue
        url = base + path.format(project_id=project_id)
        entries.append({
            "id": stable_id(service_type),
            "type": service_type,
            "name": name,
            "endpoints": [
                {
                    "id": stable_id(service_type, interface),
                    "interface": interface,
                    "region": REGION,
                    "region_id": REGION,
                    "url": url,
                }
                for interface in INTERFACES
            ],
        })
    return entries
