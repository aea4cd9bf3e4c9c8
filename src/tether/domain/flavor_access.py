"""Flavor access: the projects a private flavor is shared with, and what a flavor's extra specs ask of placement."""

from __future__ import annotations

from dataclasses import dataclass

CUSTOM_RESOURCE = "resources:CUSTOM_"


@dataclass
class FlavorAccess:
    flavor_id: str
    project_id: str


def resource_class_of(extra_specs: dict[str, str]) -> str | None:
    """The bare-metal resource class a flavor asks for (``resources:CUSTOM_BAREMETAL=1`` is ironic's
    ``baremetal``), as nova's ironic driver and placement read it; None for a VM flavor."""
    for key, value in sorted(extra_specs.items()):
        if key.startswith(CUSTOM_RESOURCE) and value.strip() == "1":
            return key.removeprefix(CUSTOM_RESOURCE).lower()
    return None
