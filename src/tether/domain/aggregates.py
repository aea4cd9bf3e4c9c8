"""Host aggregates and the availability zones they name."""

from __future__ import annotations

from dataclasses import dataclass, field

# nova's [DEFAULT] default_availability_zone and internal_service_availability_zone
DEFAULT_ZONE = "nova"
INTERNAL_ZONE = "internal"


@dataclass
class Aggregate:
    id: int
    uuid: str
    name: str
    hosts: list[str] = field(default_factory=list)
    metadata: dict[str, str] = field(default_factory=dict)
    created_at: float = 0.0
    updated_at: float | None = None

    @property
    def availability_zone(self) -> str | None:
        return self.metadata.get("availability_zone")


def zone_of(host: str, aggregates: list[Aggregate]) -> str:
    """A host's availability zone: the one an aggregate of it names, else the default."""
    for aggregate in aggregates:
        if host in aggregate.hosts and aggregate.availability_zone:
            return aggregate.availability_zone
    return DEFAULT_ZONE
