"""Networks, subnets and ports: what each collection asks of the network service."""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from typing import Any

from tether.api.network import attributes, listing, views
from tether.api.network.attributes import NETWORK, PORT, SUBNET, Resource
from tether.api.network.l3_attributes import FLOATINGIP, ROUTER
from tether.api.network.security_group_attributes import RULE_DEFAULTS, SECURITY_GROUP, SECURITY_GROUP_RULE
from tether.domain import network_tags
from tether.domain.errors.network import InvalidInput, NetworkError
from tether.domain.network import Network, Port, Subnet
from tether.domain.routers import FloatingIp, Router
from tether.domain.security_groups import SecurityGroup, SecurityGroupRule
from tether.services.context import RequestContext
from tether.services.network import NetworkService

log = logging.getLogger(__name__)

PROVIDER_ATTRIBUTES = ("provider:network_type", "provider:physical_network", "provider:segmentation_id")


class Collection(ABC):
    resource: Resource

    @abstractmethod
    async def create(self, service: NetworkService, ctx: RequestContext, specs: list[dict[str, Any]]) -> list[Any]:
        """Create every spec or none of them."""

    @abstractmethod
    async def get(self, service: NetworkService, ctx: RequestContext, key: str) -> Any: ...

    @abstractmethod
    async def list(self, service: NetworkService, ctx: RequestContext, filters: dict[str, Any]) -> list[Any]: ...

    @abstractmethod
    async def update(self, service: NetworkService, ctx: RequestContext, key: str, values: dict[str, Any]) -> Any:
        """``values`` by neutron's names, already converted."""

    @abstractmethod
    async def delete(self, service: NetworkService, ctx: RequestContext, key: str) -> None: ...

    @abstractmethod
    async def render(self, service: NetworkService, entities: list[Any]) -> list[dict[str, Any]]: ...

    def create_spec(self, item: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
        return attributes.read_create(self.resource, item, ctx)

    async def page(self, service: NetworkService, ctx: RequestContext, query: listing.ListQuery,
                   marker: Any) -> list[dict[str, Any]]:
        """One page of views: ``query`` after ``marker`` (the entity it names, None without one).

        This default lists every row the filters pick and pages the views in memory (``listing.page``);
        a collection whose service pages in the database overrides it with ``_paged_in_store``, as the
        networks, subnets and ports do.
        """
        found = await self.list(service, ctx, query.service_filters)
        if query.changed_since is not None:
            since = query.changed_since
            found = [entity for entity in found if int(entity.updated_at) >= since]
        rendered = await self.render(service, found)
        if query.tag_filters:
            rendered = [view for view in rendered if network_tags.matches(view.get("tags", ()), query.tag_filters)]
        shown = None if marker is None else (await self.render(service, [marker]))[0]
        return listing.page(rendered, query, shown)


async def _paged_in_store(collection: Collection, lister: Callable[..., Awaitable[list[Any]]],
                          service: NetworkService, ctx: RequestContext, query: listing.ListQuery,
                          marker: Any) -> list[dict[str, Any]]:
    """One page of views, the service's list (``lister(ctx, query, marker, **filters)``) paged in the
    database (``Repository.page``)."""
    if not listing.constants_match(collection.resource, query):
        return []
    if query.tag_filters:
        # Tags are a JSON list, which no index serves: a tag-filtered list is paged among the views.
        return await Collection.page(collection, service, ctx, query, marker)
    found = await lister(ctx, listing.stored(collection.resource, query), marker, **query.service_filters)
    return await collection.render(service, found)


async def _one_by_one(create: Callable[[dict[str, Any]], Awaitable[Any]],
                      delete: Callable[[str], Awaitable[None]], specs: list[dict[str, Any]]) -> list[Any]:
    """neutron's emulated bulk create: one at a time, and what was made is deleted again if one fails."""
    created: list[Any] = []
    try:
        for spec in specs:
            created.append(await create(spec))
    except BaseException:
        for entity in reversed(created):
            try:
                await delete(entity.id)
            except NetworkError:
                log.exception("could not undo the bulk creation of %s", entity.id)
        raise
    return created


class Networks(Collection):
    resource = NETWORK

    async def create(self, service: NetworkService, ctx: RequestContext, specs: list[dict[str, Any]]) -> list[Any]:
        async def create_one(spec: dict[str, Any]) -> Network:
            return await service.create_network(ctx, **{"name": "", **spec})

        return await _one_by_one(create_one, lambda key: service.delete_network(ctx, key), specs)

    async def get(self, service: NetworkService, ctx: RequestContext, key: str) -> Network:
        return await service.get_network(ctx, key)

    async def list(self, service: NetworkService, ctx: RequestContext, filters: dict[str, Any]) -> list[Any]:
        return await service.list_networks(ctx, **filters)

    async def page(self, service: NetworkService, ctx: RequestContext, query: listing.ListQuery,
                   marker: Any) -> list[dict[str, Any]]:
        return await _paged_in_store(self, service.list_networks, service, ctx, query, marker)

    async def update(self, service: NetworkService, ctx: RequestContext, key: str, values: dict[str, Any]) -> Network:
        provider = {name: values.pop(name) for name in PROVIDER_ATTRIBUTES if name in values}
        if provider:
            current = await service.get_network(ctx, key)
            if any(getattr(current, self.resource.by_name[name].field or name) != value
                   for name, value in provider.items()):
                # ML2's words: the segment of a network is fixed once it exists
                raise InvalidInput(error_message="Plugin does not support updating the following provider "
                                                 f"network attributes: {', '.join(PROVIDER_ATTRIBUTES)}")
        return await service.update_network(ctx, key, **attributes.fields_of(self.resource, values))

    async def delete(self, service: NetworkService, ctx: RequestContext, key: str) -> None:
        await service.delete_network(ctx, key)

    async def render(self, service: NetworkService, entities: list[Any]) -> list[dict[str, Any]]:
        if not entities:
            return []
        # A network lists every subnet on it, whoever owns them, as neutron's does.
        subnets = await service.list_subnets(RequestContext.internal(), network_id=[n.id for n in entities])
        by_network: dict[str, list[Subnet]] = {}
        for subnet in sorted(subnets, key=lambda s: (s.created_at, s.id)):
            by_network.setdefault(subnet.network_id, []).append(subnet)
        tags = await service.tags_of([n.id for n in entities])
        return [views.network_view(n, [s.id for s in by_network.get(n.id, [])], tags.get(n.id, ())) for n in entities]


class Subnets(Collection):
    resource = SUBNET

    def create_spec(self, item: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
        spec = attributes.read_create(self.resource, item, ctx)
        attributes.require_cidr(spec)
        return spec

    async def create(self, service: NetworkService, ctx: RequestContext, specs: list[dict[str, Any]]) -> list[Any]:
        async def create_one(spec: dict[str, Any]) -> Subnet:
            return await service.create_subnet(ctx, **spec)

        return await _one_by_one(create_one, lambda key: service.delete_subnet(ctx, key), specs)

    async def get(self, service: NetworkService, ctx: RequestContext, key: str) -> Subnet:
        return await service.get_subnet(ctx, key)

    async def list(self, service: NetworkService, ctx: RequestContext, filters: dict[str, Any]) -> list[Any]:
        return await service.list_subnets(ctx, **filters)

    async def page(self, service: NetworkService, ctx: RequestContext, query: listing.ListQuery,
                   marker: Any) -> list[dict[str, Any]]:
        return await _paged_in_store(self, service.list_subnets, service, ctx, query, marker)

    async def update(self, service: NetworkService, ctx: RequestContext, key: str, values: dict[str, Any]) -> Subnet:
        return await service.update_subnet(ctx, key, **attributes.fields_of(self.resource, values))

    async def delete(self, service: NetworkService, ctx: RequestContext, key: str) -> None:
        await service.delete_subnet(ctx, key)

    async def render(self, service: NetworkService, entities: list[Any]) -> list[dict[str, Any]]:
        tags = await service.tags_of([subnet.id for subnet in entities])
        return [views.subnet_view(subnet, tags.get(subnet.id, ())) for subnet in entities]


class Ports(Collection):
    resource = PORT

    async def create(self, service: NetworkService, ctx: RequestContext, specs: list[dict[str, Any]]) -> list[Any]:
        # the service creates a bulk in one transaction: every port or none
        return await service.create_ports(ctx, specs)

    async def get(self, service: NetworkService, ctx: RequestContext, key: str) -> Port:
        return await service.get_port(ctx, key)

    async def list(self, service: NetworkService, ctx: RequestContext, filters: dict[str, Any]) -> list[Any]:
        return await service.list_ports(ctx, **filters)

    async def page(self, service: NetworkService, ctx: RequestContext, query: listing.ListQuery,
                   marker: Any) -> list[dict[str, Any]]:
        return await _paged_in_store(self, service.list_ports, service, ctx, query, marker)

    async def update(self, service: NetworkService, ctx: RequestContext, key: str, values: dict[str, Any]) -> Port:
        return await service.update_port(ctx, key, **attributes.fields_of(self.resource, values))

    async def delete(self, service: NetworkService, ctx: RequestContext, key: str) -> None:
        await service.delete_port(ctx, key)

    async def render(self, service: NetworkService, entities: list[Any]) -> list[dict[str, Any]]:
        tags = await service.tags_of([port.id for port in entities])
        return [views.port_view(port, tags.get(port.id, ())) for port in entities]




class SecurityGroups(Collection):
    resource = SECURITY_GROUP

    async def create(self, service: NetworkService, ctx: RequestContext, specs: list[dict[str, Any]]) -> list[Any]:
        async def create_one(spec: dict[str, Any]) -> SecurityGroup:
            return await service.create_security_group(ctx, **spec)

        return await _one_by_one(create_one, lambda key: service.delete_security_group(ctx, key), specs)

    async def get(self, service: NetworkService, ctx: RequestContext, key: str) -> SecurityGroup:
        return await service.get_security_group(ctx, key)

    async def list(self, service: NetworkService, ctx: RequestContext, filters: dict[str, Any]) -> list[Any]:
        return await service.list_security_groups(ctx, **filters)

    async def update(self, service: NetworkService, ctx: RequestContext, key: str,
                     values: dict[str, Any]) -> SecurityGroup:
        return await service.update_security_group(ctx, key, **attributes.fields_of(self.resource, values))

    async def delete(self, service: NetworkService, ctx: RequestContext, key: str) -> None:
        await service.delete_security_group(ctx, key)

    async def render(self, service: NetworkService, entities: list[Any]) -> list[dict[str, Any]]:
        if not entities:
            return []
        rules = await service.rules_of([group.id for group in entities])
        by_group: dict[str, list[SecurityGroupRule]] = {}
        for rule in rules:
            by_group.setdefault(rule.security_group_id, []).append(rule)
        tags = await service.tags_of([group.id for group in entities])
        return [views.security_group_view(group, by_group.get(group.id, []), tags.get(group.id, ()))
                for group in entities]


class SecurityGroupRules(Collection):
    resource = SECURITY_GROUP_RULE

    def create_spec(self, item: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
        return {**RULE_DEFAULTS, **attributes.read_create(self.resource, item, ctx)}

    async def create(self, service: NetworkService, ctx: RequestContext, specs: list[dict[str, Any]]) -> list[Any]:
        # neutron's native bulk: every rule of one group, or none
        return await service.create_security_group_rules(ctx, specs)

    async def get(self, service: NetworkService, ctx: RequestContext, key: str) -> SecurityGroupRule:
        return await service.get_security_group_rule(ctx, key)

    async def list(self, service: NetworkService, ctx: RequestContext, filters: dict[str, Any]) -> list[Any]:
        return await service.list_security_group_rules(ctx, **filters)

    async def update(self, service: NetworkService, ctx: RequestContext, key: str, values: dict[str, Any]) -> Any:
        return await service.update_security_group_rule(ctx, key, **attributes.fields_of(self.resource, values))

    async def delete(self, service: NetworkService, ctx: RequestContext, key: str) -> None:
        await service.delete_security_group_rule(ctx, key)

    async def render(self, service: NetworkService, entities: list[Any]) -> list[dict[str, Any]]:
        return [views.security_group_rule_view(rule) for rule in entities]


class Routers(Collection):
    resource = ROUTER

    async def create(self, service: NetworkService, ctx: RequestContext, specs: list[dict[str, Any]]) -> list[Any]:
        async def create_one(spec: dict[str, Any]) -> Router:
            return await service.create_router(ctx, **spec)

        return await _one_by_one(create_one, lambda key: service.delete_router(ctx, key), specs)

    async def get(self, service: NetworkService, ctx: RequestContext, key: str) -> Router:
        return await service.get_router(ctx, key)

    async def list(self, service: NetworkService, ctx: RequestContext, filters: dict[str, Any]) -> list[Any]:
        return await service.list_routers(ctx, **filters)

    async def update(self, service: NetworkService, ctx: RequestContext, key: str, values: dict[str, Any]) -> Router:
        return await service.update_router(ctx, key, **attributes.fields_of(self.resource, values))

    async def delete(self, service: NetworkService, ctx: RequestContext, key: str) -> None:
        await service.delete_router(ctx, key)

    async def render(self, service: NetworkService, entities: list[Any]) -> list[dict[str, Any]]:
        ids = [router.id for router in entities]
        gateways = await service.router_gateway_ports(ids) if ids else {}
        tags = await service.tags_of(ids)
        return [views.router_view(router, gateways.get(router.id), tags.get(router.id, ())) for router in entities]


class FloatingIps(Collection):
    resource = FLOATINGIP

    async def create(self, service: NetworkService, ctx: RequestContext, specs: list[dict[str, Any]]) -> list[Any]:
        async def create_one(spec: dict[str, Any]) -> FloatingIp:
            return await service.create_floatingip(ctx, **spec)

        return await _one_by_one(create_one, lambda key: service.delete_floatingip(ctx, key), specs)

    async def get(self, service: NetworkService, ctx: RequestContext, key: str) -> FloatingIp:
        return await service.get_floatingip(ctx, key)

    async def list(self, service: NetworkService, ctx: RequestContext, filters: dict[str, Any]) -> list[Any]:
        return await service.list_floatingips(ctx, **filters)

    async def update(self, service: NetworkService, ctx: RequestContext, key: str,
                     values: dict[str, Any]) -> FloatingIp:
        return await service.update_floatingip(ctx, key, **attributes.fields_of(self.resource, values))

    async def delete(self, service: NetworkService, ctx: RequestContext, key: str) -> None:
        await service.delete_floatingip(ctx, key)

    async def render(self, service: NetworkService, entities: list[Any]) -> list[dict[str, Any]]:
        tags = await service.tags_of([fip.id for fip in entities])
        return [views.floatingip_view(fip, tags.get(fip.id, ())) for fip in entities]


COLLECTIONS: tuple[Collection, ...] = (Networks(), Subnets(), Ports(), SecurityGroups(), SecurityGroupRules(),
                                       Routers(), FloatingIps())
