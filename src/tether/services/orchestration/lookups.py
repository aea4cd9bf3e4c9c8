"""Names or ids, as templates give them, resolved as heat's client plugins resolve them.

A template says ``flavor: m1.tiny`` and ``network: private``; heat looks each up by id, then
by name, and refuses an unknown or ambiguous one in the words of the service it asked. The
same lookups check the custom constraints of parameters (``nova.flavor``, ``glance.image``,
``neutron.network``, ...) before a stack is accepted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tether.domain.errors import TetherError
from tether.domain.errors import image as ie
from tether.domain.errors import network as ne
from tether.domain.ids import is_uuid_like
from tether.domain.orchestration.errors import StackValidationFailed
from tether.services.context import RequestContext

if TYPE_CHECKING:
    from tether.services.compute import ComputeService
    from tether.services.image import ImageService
    from tether.services.network import NetworkService


class NotFoundByName(TetherError):
    service = "orchestration"
    status = 404


@dataclass(eq=False)
class Lookups:
    compute: ComputeService
    image: ImageService
    network: NetworkService

    async def flavor_id(self, ctx: RequestContext, value: str) -> str:
        flavors = await self.compute.visible_flavors(ctx, is_public=None)
        return _one(value, [(f.id, f.name) for f in flavors], "The Flavor ({value}) could not be found.",
                    "Multiple Flavor matches found for name '{value}'")

    async def image_id(self, ctx: RequestContext, value: str) -> str:
        if is_uuid_like(value):
            try:
                return (await self.image.get_image(ctx, value)).id
            except ie.ImageNotFound:
                pass
        images = await self.image.list_images(ctx, name=value)
        return _one(value, [(i.id, i.name) for i in images], "The Image ({value}) could not be found.",
                    "Multiple physical resources were found with name ({value}).")

    async def network_id(self, ctx: RequestContext, value: str) -> str:
        if is_uuid_like(value):
            try:
                return (await self.network.get_network(ctx, value)).id
            except ne.NotFound:
                pass
        found = await self.network.list_networks(ctx, name=value)
        return _one(value, [(n.id, n.name) for n in found], "Unable to find network with name or id '{value}'",
                    "Multiple network matches found for name '{value}', use an ID to be more specific.")

    async def subnet_id(self, ctx: RequestContext, value: str) -> str:
        if is_uuid_like(value):
            try:
                return (await self.network.get_subnet(ctx, value)).id
            except ne.NotFound:
                pass
        found = await self.network.list_subnets(ctx, name=value)
        return _one(value, [(s.id, s.name) for s in found], "Unable to find subnet with name or id '{value}'",
                    "Multiple subnet matches found for name '{value}', use an ID to be more specific.")

    async def port_id(self, ctx: RequestContext, value: str) -> str:
        if is_uuid_like(value):
            try:
                return (await self.network.get_port(ctx, value)).id
            except ne.NotFound:
                pass
        found = await self.network.list_ports(ctx, name=value)
        return _one(value, [(p.id, p.name) for p in found], "Unable to find port with name or id '{value}'",
                    "Multiple port matches found for name '{value}', use an ID to be more specific.")

    async def check(self, ctx: RequestContext, constraint: str, value: Any) -> None:
        """A custom constraint (``nova.flavor``, ``glance.image``, ``neutron.network``, ...) on ``value``."""
        lookup = {"nova.flavor": self.flavor_id, "glance.image": self.image_id, "neutron.network": self.network_id,
                  "neutron.subnet": self.subnet_id, "neutron.port": self.port_id}.get(constraint)
        if lookup is None:
            if constraint == "nova.keypair":
                raise NotFoundByName(f"The Key ({value}) could not be found.")
            return  # heat passes constraints its deployment has no plugin for
        await lookup(ctx, str(value))


def _one(value: str, candidates: list[tuple[str, str]], missing: str, ambiguous: str) -> str:
    by_id = [ident for ident, _ in candidates if ident == value]
    if by_id:
        return by_id[0]
    by_name = [ident for ident, name in candidates if name == value]
    if not by_name:
        raise NotFoundByName(missing.format(value=value))
    if len(by_name) > 1:
        raise NotFoundByName(ambiguous.format(value=value))
    return by_name[0]


def as_validation_error(error: TetherError, value: Any, path: tuple[str | int, ...],
                        line: int | None) -> StackValidationFailed:
    """A failed lookup while a template is validated: heat's words, naming the place."""
    return StackValidationFailed(f"Error validating value '{value}': {error.message}", path=path, line=line)


__all__ = ["Lookups", "NotFoundByName", "as_validation_error"]
