"""Image records (no image data yet)."""

from __future__ import annotations

from dataclasses import dataclass, field

VISIBILITIES = ("public", "private", "shared", "community")
DISK_FORMATS = ("ami", "ari", "aki", "vhd", "vhdx", "vmdk", "raw", "qcow2", "vdi", "iso", "ploop")
CONTAINER_FORMATS = ("ami", "ari", "aki", "bare", "ovf", "ova", "docker", "compressed")


@dataclass
class Image:
    id: str
    name: str | None
    owner: str | None
    status: str = "active"
    visibility: str = "public"
    disk_format: str | None = "qcow2"
    container_format: str | None = "bare"
    min_disk: int = 0
    min_ram: int = 0
    size: int | None = None
    protected: bool = False
    tags: list[str] = field(default_factory=list)
    properties: dict[str, str] = field(default_factory=dict)
    created_at: float = 0.0
    updated_at: float = 0.0
