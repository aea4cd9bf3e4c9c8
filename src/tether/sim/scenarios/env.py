"""What a scenario's steps can do: the operations a user or an operator would perform.

Every operation goes through the real services, and each records a step
(virtual time, what happened, and any error in the service's own words).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tether.domain import baremetal_states as bms
from tether.domain import replies as rp
from tether.domain.errors import TetherError
from tether.services.context import RequestContext
from tether.services.orchestration.records import stack_key
from tether.sim.scenarios import observe
from tether.sim.scheduler import Scheduler

if TYPE_CHECKING:
    from tether.cloud import Cloud

SETTLE_POLL = 5.0


@dataclass
class StepRecord:
    at: float
    actor: str
    text: str

    def as_dict(self) -> dict[str, Any]:
        return {"at": round(self.at, 3), "actor": self.actor, "text": self.text}


@dataclass
class Env:
    cloud: Cloud
    admin: RequestContext
    names: dict[str, str] = field(default_factory=dict)
    steps: list[StepRecord] = field(default_factory=list)
    outcomes: dict[str, str] = field(default_factory=dict)
    network: str = "private"
    # How often a waiting user looks again even without a notification. The explorer
    # lengthens it: each extra look is one more step to interleave, and finds nothing new.
    poll_seconds: float = SETTLE_POLL
    # The users' history, for the invariant user-resources-kept: what they created (id -> kind),
    # and what they asked to delete (asked, whether or not the delete succeeded).
    user_made: dict[str, str] = field(default_factory=dict)
    deleted_on_request: set[str] = field(default_factory=set)
    # Every operation's call and reply, with the state it answered in (``domain.replies`` judges them).
    history: list[rp.Event] = field(default_factory=list)
    # Around the reads of a reply's state: the explorer keeps them out of the steps' footprints.
    unseen: Callable[[], AbstractContextManager[None]] = nullcontext

    # -- bookkeeping ------------------------------------------------------------------

    def step(self, text: str) -> None:
        actor = Scheduler.current()
        self.steps.append(StepRecord(self.cloud.rt.now(), actor.name if actor else "-", text))

    @property
    def ctx(self) -> RequestContext:
        return self.admin.fresh()

    def id(self, name: str) -> str:
        return self.names.get(name, name)

    def call(self, op: str, *, server: str = "", port: str = "", node: str = "", for_boot: bool = False) -> rp.Call:
        actor = Scheduler.current()
        made = rp.Call(len(self.history), actor.name if actor else "-", op, server, port, node, for_boot)
        self.history.append(made)
        return made

    async def reply(self, call: rp.Call, answer: str | TetherError, *, server: str = "") -> None:
        """How ``call`` ended; a success with the state it answered in, read before anything else runs."""
        if isinstance(answer, TetherError):
            self.history.append(rp.Reply(call, False, f"{answer.kind}: {answer.message}"))
            return
        if server and not call.server:  # a boot learns its server's id from its reply
            call = rp.Call(call.number, call.actor, call.op, server, call.port, call.node, call.for_boot)
        with self.unseen():
            snap = await observe.around(self.cloud, [call.server], [call.port])
        self.history.append(rp.Reply(call, True, answer, rp.facts_of(snap)))

    def _failed(self, what: str, error: TetherError) -> None:
        self.outcomes[what] = f"{error.kind}: {error.message}"
        self.step(f"{what} failed: {error.kind} (HTTP {error.status}): {error.message}")

    # -- servers ------------------------------------------------------------------------

    async def boot(self, name: str, *, flavor: str = "baremetal", ports: tuple[str, ...] = (),
                   wait: bool = True, group: str | None = None) -> None:
        compute = self.cloud.compute
        networks: Any = [{"port": self.id(p)} for p in ports] or [{"uuid": self.id(self.network)}]
        call = self.call(rp.BOOT)
        try:
            instance = await compute.create_server(
                self.ctx, name=name, flavor_id=self.id(flavor), image_id=self.id("cirros"), networks=networks,
                group_id=self.id(group) if group else None)
        except TetherError as error:
            await self.reply(call, error)
            self._failed(f"boot {name}", error)
            return
        await self.reply(call, "accepted", server=instance.uuid)
        self.names[name] = instance.uuid
        self.cloud.rt.notify(("env.name", name))
        self.step(f"boot {name}: accepted as {instance.uuid}")
        if wait:
            await self.wait_settled(name, for_boot=True)

    async def wait_known(self, name: str, timeout: float = 60.0) -> bool:
        """Wait until a concurrent step has created ``name`` (a server being booted)."""
        rt = self.cloud.rt
        deadline = rt.now() + timeout
        while name not in self.names:
            if rt.now() >= deadline:
                return False
            await rt.wait(("env.name", name), deadline - rt.now(), guard=True)
        return True

    async def wait_settled(self, name: str, timeout: float = 7200.0, *, for_boot: bool = False) -> str:
        """Poll like `openstack server create --wait`: until the server leaves BUILD and its task.

        Each look is GET /servers/detail?uuid=...&all_tenants=1 (``find_servers``), which reads the
        instance row alone, as the explorer has always seen this step. GET /servers/{id}
        (``server_record``) would read the info cache as well, and every attach, detach or port
        delete writing it would become one more interleaving to explore, for a read whose
        addresses this never looks at. The fault is read once, from the record of a server found in
        ERROR: the only server whose fault this reports, and the only one whose record has it.
        """
        compute, rt = self.cloud.compute, self.cloud.rt
        deadline = rt.now() + timeout
        call = self.call(rp.SHOW_SERVER, server=self.id(name), for_boot=for_boot)
        while True:
            found = await compute.find_servers(self.ctx, all_projects=True, uuid=self.id(name), deleted=False)
            if not found:
                await self.reply(call, rp.GONE)
                self.outcomes[name] = "DELETED"
                self.step(f"server {name} is gone")
                return "DELETED"
            (instance,) = found
            if (instance.status != "BUILD" and instance.task_state is None) or rt.now() >= deadline:
                break
            await rt.wait(("instance", instance.uuid), self.poll_seconds, guard=True)
        fault = (await compute.server_record(self.ctx, instance.uuid)).fault if instance.status == "ERROR" else None
        where = f" on {instance.node}" if instance.node else ""
        text = f"server {name}: {instance.status}{where}"
        if instance.status == "ERROR" and fault is not None:
            text += f"; fault: {fault.message}"
        if instance.status == "BUILD":
            text += f" (task_state {instance.task_state}) after {timeout:g} s"
        await self.reply(call, instance.status)
        self.outcomes[name] = instance.status
        self.step(text)
        return instance.status

    async def delete_server(self, name: str, wait: bool = True) -> None:
        call = self.call(rp.DELETE_SERVER, server=self.id(name))
        try:
            await self.cloud.compute.delete_server(self.ctx, self.id(name))
        except TetherError as error:
            await self.reply(call, error)
            self._failed(f"delete {name}", error)
            return
        await self.reply(call, "accepted")
        self.step(f"delete {name}: accepted")
        if wait:
            await self.wait_settled(name)

    async def rebuild(self, name: str, wait: bool = True) -> None:
        self.call(rp.CHANGE_SERVER, server=self.id(name))
        try:
            await self.cloud.compute.rebuild_server(self.ctx, self.id(name), self.id("cirros"))
        except TetherError as error:
            self._failed(f"rebuild {name}", error)
            return
        self.step(f"rebuild {name}: accepted")
        if wait:
            await self.wait_settled(name)

    async def resize(self, name: str, flavor: str, wait: bool = True) -> None:
        self.call(rp.CHANGE_SERVER, server=self.id(name))
        try:
            await self.cloud.compute.resize_server(self.ctx, self.id(name), self.id(flavor))
        except TetherError as error:
            self._failed(f"resize {name}", error)
            return
        self.step(f"resize {name} to {flavor}: accepted")
        if wait:
            await self.wait_settled(name)

    async def revert_resize(self, name: str, wait: bool = True) -> None:
        self.call(rp.CHANGE_SERVER, server=self.id(name))
        try:
            await self.cloud.compute.revert_resize(self.ctx, self.id(name))
        except TetherError as error:
            self._failed(f"revert the resize of {name}", error)
            return
        self.step(f"revert the resize of {name}: accepted")
        if wait:
            await self.wait_settled(name)

    async def attach_port(self, server: str, port: str) -> None:
        call = self.call(rp.ATTACH, server=self.id(server), port=self.id(port))
        try:
            await self.cloud.compute.attach_interface(self.ctx, self.id(server), port_id=self.id(port))
        except TetherError as error:
            await self.reply(call, error)
            self._failed(f"attach {port} to {server}", error)
            return
        await self.reply(call, "ok")
        self.outcomes[f"attach {port} to {server}"] = "ok"
        self.step(f"attach {port} to {server}: ok")

    async def detach_port(self, server: str, port: str) -> None:
        self.call(rp.DETACH, server=self.id(server), port=self.id(port))
        try:
            await self.cloud.compute.detach_interface(self.ctx, self.id(server), self.id(port))
        except TetherError as error:
            self._failed(f"detach {port} from {server}", error)
            return
        self.step(f"detach {port} from {server}: ok")

    async def refresh_cache(self, server: str) -> None:
        self.call(rp.CHANGE_SERVER, server=self.id(server))
        self.step(f"refresh the network info cache of {server}")
        await self.cloud.compute.refresh_network_cache(self.id(server))

    # -- ports ------------------------------------------------------------------------

    async def create_port(self, name: str) -> None:
        port = await self.cloud.network.create_port(self.ctx, network_id=self.id(self.network), name=name)
        self.names[name] = port.id
        self.user_made[port.id] = "port"
        self.step(f"port {name} created: {port.id} mac {port.mac_address}")

    async def delete_port(self, name: str) -> None:
        self.deleted_on_request.add(self.id(name))
        call = self.call(rp.DELETE_PORT, port=self.id(name))
        try:
            await self.cloud.network.delete_port(self.ctx, self.id(name))
        except TetherError as error:
            await self.reply(call, error)
            self._failed(f"delete port {name}", error)
            return
        await self.reply(call, "ok")
        self.step(f"port {name} deleted")

    async def delete_ports_of(self, server: str) -> None:
        """Delete the server's ports the way an operator might, behind compute's back."""
        for port in await self.cloud.network.list_ports(self.ctx, device_id=self.id(server)):
            self.deleted_on_request.add(port.id)
            call = self.call(rp.DELETE_PORT, port=port.id)
            await self.cloud.network.delete_port(self.ctx, port.id)
            await self.reply(call, "ok")
            self.step(f"port {port.id} of {server} deleted")

    # -- keypairs ----------------------------------------------------------------------

    async def create_keypair(self, name: str) -> None:
        keypair, _ = await self.cloud.compute.create_keypair(self.ctx, name)
        self.names[f"keypair {name}"] = str(keypair.id)
        self.user_made[str(keypair.id)] = "keypair"
        self.step(f"keypair {name} created: {keypair.fingerprint}")

    async def delete_keypair(self, name: str) -> None:
        self.deleted_on_request.add(self.id(f"keypair {name}"))
        try:
            await self.cloud.compute.delete_keypair(self.ctx, name)
        except TetherError as error:
            self._failed(f"delete keypair {name}", error)
            return
        self.step(f"keypair {name} deleted")

    # -- stacks ----------------------------------------------------------------------------

    async def create_stack(self, name: str, template: dict[str, Any]) -> None:
        try:
            stack = await self.cloud.orchestration.create_stack(self.ctx, name=name, template=template)
        except TetherError as error:
            self._failed(f"stack create {name}", error)
            return
        self.names[name] = stack.id
        self.step(f"openstack stack create {name}: {stack.state}")
        await self.wait_stack(name)

    async def update_stack(self, name: str) -> None:
        """`openstack stack update --existing NAME`: the same template, which replaces what failed."""
        try:
            stack = await self.cloud.orchestration.update_stack(self.ctx, self.id(name), existing=True)
        except TetherError as error:
            self._failed(f"stack update {name}", error)
            return
        self.step(f"openstack stack update --existing {name}: {stack.state}")
        await self.wait_stack(name)

    async def delete_stack(self, name: str) -> None:
        try:
            await self.cloud.orchestration.delete_stack(self.ctx, self.id(name))
        except TetherError as error:
            self._failed(f"stack delete {name}", error)
            return
        self.step(f"openstack stack delete {name}")
        await self.wait_stack(name)

    async def wait_stack(self, name: str, timeout: float = 7200.0) -> str:
        """Poll like `--wait`: until the stack's action is over."""
        rt = self.cloud.rt
        deadline = rt.now() + timeout
        while True:
            stack = await self.cloud.orchestration.find_stack(self.ctx, self.id(name), deleted=True)
            if not stack.state.endswith("IN_PROGRESS") or rt.now() >= deadline:
                break
            await rt.wait(stack_key(stack.id), self.poll_seconds, guard=True)
        self.outcomes[name] = stack.state
        self.step(f"stack {name}: {stack.state} ({stack.status_reason})")
        return stack.state

    # -- nodes ----------------------------------------------------------------------------

    async def undeploy(self, node: str) -> None:
        self.call(rp.CHANGE_NODE, node=self.id(node))
        try:
            await self.cloud.baremetal.set_provision_state(self.ctx, self.id(node), "deleted")
        except TetherError as error:
            self._failed(f"undeploy {node}", error)
            return
        self.step(f"openstack baremetal node undeploy {node}")

    async def delete_node(self, node: str) -> None:
        self.call(rp.CHANGE_NODE, node=self.id(node))
        try:
            await self.cloud.baremetal.set_maintenance(self.ctx, self.id(node), True, "scenario")
            await self.cloud.baremetal.delete_node(self.ctx, self.id(node))
        except TetherError as error:
            self._failed(f"delete node {node}", error)
            return
        self.step(f"node {node} put in maintenance and deleted")

    async def set_maintenance(self, node: str, on: bool) -> None:
        self.call(rp.CHANGE_NODE, node=self.id(node))
        try:
            await self.cloud.baremetal.set_maintenance(self.ctx, self.id(node), on, "scenario" if on else None)
        except TetherError as error:
            self._failed(f"maintenance {'on' if on else 'off'} {node}", error)
            return
        self.step(f"node {node} maintenance {'on' if on else 'off'}")

    def break_hardware(self, node: str, action: str) -> None:
        """The node's BMC fails the next ``action`` (part of the situation, so the explorer keeps it too)."""
        self.cloud.world.hardware.fail(self.id(node), action)
        self.step(f"node {node}'s next {action} will fail")

    async def wait_node(self, node: str, state: str | tuple[str, ...], timeout: float = 3600.0) -> bool:
        """Wait until the node is in ``state`` (or one of them)."""
        rt = self.cloud.rt
        deadline = rt.now() + timeout
        states = (state,) if isinstance(state, str) else state
        while rt.now() < deadline:
            found = await self.cloud.baremetal.find_node(self.id(node))
            if found is not None and found.provision_state in states:
                return True
            await rt.wait(self.cloud.baremetal.node_key(self.id(node)), self.poll_seconds, guard=True)
        return False

    async def node_state(self, node: str) -> str:
        found = await self.cloud.baremetal.find_node(self.id(node))
        return "deleted" if found is None else found.provision_state

    async def wait_node_in_deploy_wait(self, node: str) -> bool:
        return await self.wait_node(node, bms.DEPLOYWAIT)
