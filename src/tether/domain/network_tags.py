"""Tags on network resources (neutron's standard-attr-tag) and how list filters match them."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

# neutron's MAX_TAG_LEN and MAX_TAGS
MAX_TAG_LEN = 255
MAX_TAGS = 50
# The collections whose members carry tags, by their URL name.
TAGGED = ("networks", "subnets", "ports", "routers", "security-groups", "security_groups", "floatingips")
TAG_FILTERS = ("tags", "tags-any", "not-tags", "not-tags-any")


@dataclass
class ResourceTag:
    resource_id: str
    tag: str
    resource_type: str = ""


def matches(tags: Collection[str], filters: dict[str, list[str]]) -> bool:
    """neutron's tag filters: each value is a comma list; tags = all of, tags-any = one of,
    not-tags = not all of, not-tags-any = none of."""
    have = set(tags)
    for name, values in filters.items():
        for value in values:
            wanted = {tag for tag in value.split(",") if tag}
            if name == "tags" and not wanted <= have:
                return False
            if name == "tags-any" and not wanted & have:
                return False
            if name == "not-tags" and wanted and wanted <= have:
                return False
            if name == "not-tags-any" and wanted & have:
                return False
    return True
