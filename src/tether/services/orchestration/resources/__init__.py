"""One handler per resource type."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from tether.services.orchestration.resources.base import Handler


class Handlers(Mapping[str, Handler]):
    """The handler of each resource type; any other type the template accepted names a nested
    template in ``files`` (the environment's ``resource_registry`` mapped it there)."""

    def __init__(self, by_type: dict[str, Handler]) -> None:
        self.by_type = by_type
        self.template_resource: Handler | None = None

    def __getitem__(self, type_name: str) -> Handler:
        handler = self.by_type.get(type_name) or self.template_resource
        if handler is None:
            raise KeyError(type_name)
        return handler

    def __iter__(self) -> Iterator[str]:
        return iter(self.by_type)

    def __len__(self) -> int:
        return len(self.by_type)
