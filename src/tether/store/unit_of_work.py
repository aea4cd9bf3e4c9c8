"""One unit of work: one transaction, the repositories bound to it, and the events it publishes
once it has committed (after cosmicpython's unit of work)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from tether.store import repos
from tether.store.repository import Repository

if TYPE_CHECKING:
    from tether.domain import baremetal, compute, identity, image, metadefs, network
    from tether.domain.orchestration import stacks as orchestration
    from tether.runtime.bus import MessageBus
    from tether.store.connection import StoreConnection

T = TypeVar("T")


class Bound(Generic[T]):
    """A repository bound to one transaction."""

    __slots__ = ("_conn", "_repo")

    def __init__(self, repo: Repository[T], conn: StoreConnection) -> None:
        self._repo, self._conn = repo, conn

    async def get(self, key: Any, lock: str | None = None) -> T | None:
        return await self._repo.get(self._conn, key, lock)

    async def find(self, order_by: Sequence[str] = (), limit: int | None = None, **filters: Any) -> list[T]:
        return await self._repo.find(self._conn, order_by, limit, **filters)

    async def first(self, **filters: Any) -> T | None:
        return await self._repo.first(self._conn, **filters)

    async def count(self, **filters: Any) -> int:
        return await self._repo.count(self._conn, **filters)

    async def tally(self, by: tuple[str, ...], **filters: Any) -> list[tuple[Any, ...]]:
        return await self._repo.tally(self._conn, by, **filters)

    async def add(self, entity: T) -> T:
        return await self._repo.add(self._conn, entity)

    async def add_all(self, entities: Iterable[T]) -> None:
        await self._repo.add_all(self._conn, entities)

    async def update(self, key: Any, expect: dict[str, Any] | None = None, **values: Any) -> bool:
        return await self._repo.update(self._conn, key, expect, **values)

    async def update_where(self, filters: dict[str, Any], **values: Any) -> int:
        return await self._repo.update_where(self._conn, filters, **values)

    async def delete(self, key: Any) -> bool:
        return await self._repo.delete(self._conn, key)

    async def delete_where(self, **filters: Any) -> int:
        return await self._repo.delete_where(self._conn, **filters)

    async def keys_after(self, after: Any, limit: int) -> list[Any]:
        return await self._repo.keys_after(self._conn, after, limit)


class UnitOfWork:
    """A transaction. It is a ``StoreConnection`` itself, so the repositories take it as one;
    ``uow.nodes``, ``uow.ports``, ... are the repositories bound to it."""

    if TYPE_CHECKING:
        domains: Bound[identity.Domain]
        projects: Bound[identity.Project]
        users: Bound[identity.User]
        roles: Bound[identity.Role]
        role_assignments: Bound[identity.RoleAssignment]
        tokens: Bound[identity.Token]
        groups: Bound[identity.Group]
        group_members: Bound[identity.GroupMember]
        regions: Bound[identity.Region]
        catalog_services: Bound[identity.CatalogService]
        endpoints: Bound[identity.Endpoint]
        application_credentials: Bound[identity.ApplicationCredential]
        inherited_role_assignments: Bound[identity.InheritedRoleAssignment]
        credentials: Bound[identity.Credential]
        oauth_consumers: Bound[identity.OAuthConsumer]
        domain_configs: Bound[identity.DomainConfig]
        policies: Bound[identity.Policy]
        endpoint_groups: Bound[identity.EndpointGroup]
        images: Bound[image.Image]
        image_members: Bound[image.ImageMember]
        metadef_namespaces: Bound[metadefs.MetadefNamespace]
        networks: Bound[network.Network]
        subnets: Bound[network.Subnet]
        ports: Bound[network.Port]
        ip_allocations: Bound[network.IpAllocation]
        nodes: Bound[baremetal.Node]
        node_ports: Bound[baremetal.NodePort]
        portgroups: Bound[baremetal.Portgroup]
        chassis: Bound[baremetal.Chassis]
        allocations: Bound[baremetal.Allocation]
        flavors: Bound[compute.Flavor]
        hypervisors: Bound[compute.Hypervisor]
        instances: Bound[compute.Instance]
        instance_vifs: Bound[compute.VifEntry]
        instance_actions: Bound[compute.InstanceAction]
        action_events: Bound[compute.ActionEvent]
        instance_faults: Bound[compute.InstanceFault]
        stacks: Bound[orchestration.Stack]
        stack_resources: Bound[orchestration.StackResource]
        stack_ports: Bound[orchestration.StackPort]
        stack_events: Bound[orchestration.StackEvent]

    def __init__(self, conn: StoreConnection) -> None:
        self.conn = conn
        self.events: list[object] = []
        # The connection's own methods, not wrappers: a statement costs no extra call.
        self.dialect = conn.dialect
        self.execute = conn.execute
        self.run_sync = conn.run_sync
        self.fetch = conn.fetch
        self.write = conn.write
        self.write_many = conn.write_many

    def __getattr__(self, name: str) -> Bound[Any]:
        repo = getattr(repos, name, None)
        if not isinstance(repo, Repository):
            raise AttributeError(name)
        bound: Bound[Any] = Bound(repo, self.conn)
        setattr(self, name, bound)
        return bound

    def emit(self, event: object) -> None:
        """Publish ``event`` once this transaction has committed; never if it rolls back."""
        self.events.append(event)


class UnitOfWorkScope:
    """``async with store.begin() as uow``: commit and publish, or roll back and forget."""

    __slots__ = ("_bus", "_transaction", "_uow")

    def __init__(self, transaction: AbstractAsyncContextManager[StoreConnection], bus: MessageBus | None) -> None:
        self._transaction, self._bus = transaction, bus

    async def __aenter__(self) -> UnitOfWork:
        self._uow = UnitOfWork(await self._transaction.__aenter__())
        return self._uow

    async def __aexit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: Any) -> None:
        await self._transaction.__aexit__(kind, error, tb)
        if kind is None and self._bus is not None:
            for event in self._uow.events:
                self._bus.publish(event)
