"""Replies judged against the history of states: was what each operation answered true?

The invariants judge states; a reply can be false in a state that is clean
(an attach that answers 200 for a port deleted during it, whose undo left
nothing behind). So every operation's call and reply are recorded in one
history, with what was true of its resources when it answered, and states
observed later (the end state); this checks, in the manner of Jepsen's
checkers for a small set of operations, that each success is consistent with
those states:

- an attach that succeeded had the interface attached when it answered, and
  it stays attached until a later recorded operation removes it;
- a delete that succeeded leaves nothing behind: once a server is answered
  gone, nothing names it; once a port's delete succeeded, nothing names it;
- a server answered ACTIVE has its node (bare metal) and its ports, bound to
  it and plugged; one a boot answered ACTIVE has at least one.

A fact about a resource that another recorded operation was changing at the
time (invoked before the state was observed) is not held against a reply: that
operation may have come after it. Pure functions, no I/O: the explorer, the
scenario runner and the chaos (soak) runs record the history their own way.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from tether.domain import baremetal_states as bms
from tether.domain import compute_states as vm
from tether.domain.invariants import Snapshot, Violation, node_vifs

INVARIANT = "inconsistent-reply"

# Operations, by what they change.
ATTACH = "attach"
DETACH = "detach"
DELETE_PORT = "delete-port"
DELETE_SERVER = "delete-server"
BOOT = "boot"
SHOW_SERVER = "show-server"  # a look at a server's status (``--wait``): its answer is the status
CHANGE_SERVER = "change-server"  # anything else done to a server (rebuild, resize, revert, refresh)
CHANGE_NODE = "change-node"  # an operator's undeploy, maintenance or delete of a node
OUT_OF_BAND = "out-of-band"  # a row or a device changed behind the services' backs (a scenario's plant)

# Who may take a server's interface away (by the server, by the port) or its node.
_REMOVE_BY_SERVER = frozenset({DELETE_SERVER, DETACH, CHANGE_SERVER, OUT_OF_BAND})
_REMOVE_BY_PORT = frozenset({DETACH, DELETE_PORT, OUT_OF_BAND})

GONE = "DELETED"  # a look's answer when the server is not found any more


@dataclass(frozen=True)
class Call:
    """One operation invoked: ``number`` orders it in the history (a counter of the recorder's)."""

    number: int
    actor: str
    op: str
    server: str = ""
    port: str = ""
    node: str = ""
    # A look made by this boot's --wait: an ACTIVE answer is the boot's (it must have a port).
    for_boot: bool = False

    def describe(self) -> str:
        named = " ".join(part for part in (self.server and f"server {self.server}", self.port and f"port {self.port}",
                                           self.node and f"node {self.node}") if part)
        return f"{self.actor}'s {self.op} {named}".rstrip()


@dataclass(frozen=True)
class Facts:
    """What was true of the resources of interest at one moment (from a snapshot of them)."""

    ports: dict[str, str] = field(default_factory=dict)  # port id -> the server it is bound to ("" unbound)
    cached: frozenset[tuple[str, str]] = frozenset()  # (server, port) in the server's network info
    plugged: frozenset[tuple[str, str]] = frozenset()  # (server, port): a guest device, or a VIF on its node
    servers: dict[str, tuple[str, str | None, bool, str]] = field(default_factory=dict)
    # live server -> (vm_state, task_state, bare metal, node or host)
    nodes: dict[str, tuple[str, str]] = field(default_factory=dict)  # server -> (node it names, provision state)
    named: dict[str, tuple[str, ...]] = field(default_factory=dict)  # gone or not: server -> what still names it
    port_named: dict[str, tuple[str, ...]] = field(default_factory=dict)  # port -> what still names it

    def attached(self, server: str, port: str) -> bool:
        if self.ports.get(port) != server or (server, port) not in self.cached:
            return False
        state = self.servers.get(server)
        if state is None:
            return False
        vm_state, task_state, _, _ = state
        # A server at rest plugs what it lists (the zombie-interface invariant says so too).
        return (server, port) in self.plugged or vm_state != vm.ACTIVE or task_state is not None


@dataclass(frozen=True)
class Reply:
    """How ``call`` ended: success with its answer, or the error; ``facts`` as they were when it answered,
    where the recorder can read them at that moment (the deterministic scheduler), else None."""

    call: Call
    ok: bool
    answer: str
    facts: Facts | None = None


@dataclass(frozen=True)
class Observed:
    """A state observed on its own (the end of a run)."""

    facts: Facts
    label: str = "the end state"


Event = Call | Reply | Observed


def facts_of(snap: Snapshot) -> Facts:
    """The facts of a snapshot (whole or around some keys)."""
    live = {i.uuid: i for i in snap.instances if not i.deleted and i.vm_state != vm.DELETED}
    ports = {port.id: port.device_id or "" for port in snap.ports}
    cached = frozenset((entry.instance_uuid, entry.port_id) for entry in snap.vifs)
    plugged = {(device.instance_uuid, device.port_id) for device in snap.guest_devices}
    node_of = {node.uuid: node for node in snap.nodes}
    for node_uuid, vif, _ in node_vifs(snap):
        node = node_of.get(node_uuid)
        if node is not None and node.instance_uuid:
            plugged.add((node.instance_uuid, vif))
    servers = {uuid: (i.vm_state, i.task_state, i.is_baremetal, (i.node if i.is_baremetal else i.host) or "")
               for uuid, i in live.items()}
    nodes = {node.instance_uuid: (node.uuid, node.provision_state) for node in snap.nodes if node.instance_uuid}
    named: dict[str, list[str]] = {}
    port_named: dict[str, list[str]] = {}
    for port in snap.ports:
        if port.device_id:
            named.setdefault(port.device_id, []).append(f"port {port.id} is bound to it")
    for entry in snap.vifs:
        named.setdefault(entry.instance_uuid, []).append(f"its network info lists port {entry.port_id}")
    for device in snap.guest_devices:
        named.setdefault(device.instance_uuid, []).append(f"guest device {device.device} on {device.host}")
        port_named.setdefault(device.port_id, []).append(f"guest device {device.device} of {device.instance_uuid}")
    for node in snap.nodes:
        if node.instance_uuid:
            named.setdefault(node.instance_uuid, []).append(f"node {node.uuid} names it")
    for node_uuid, vif, _ in node_vifs(snap):
        port_named.setdefault(vif, []).append(f"node {node_uuid} lists it as a VIF")
    for entry in snap.vifs:
        port_named.setdefault(entry.port_id, []).append(f"the network info of {entry.instance_uuid} lists it")
    return Facts(ports, cached, frozenset(plugged), servers, nodes,
                 {k: tuple(v) for k, v in named.items()}, {k: tuple(v) for k, v in port_named.items()})


def check_replies(history: Iterable[Event]) -> list[Violation]:
    """Every reply of ``history`` that the states recorded with it or after it contradict."""
    events = list(history)
    calls: list[Call] = []  # invoked so far, in order
    found: dict[int, Violation] = {}  # one finding per reply: a false claim seen in several states is one lie
    promises: list[Reply] = []  # successes whose claim must hold in every later state
    answered: set[int] = set()
    finished: dict[int, frozenset[int]] = {}  # call -> the calls that had answered before it was invoked
    for event in events:
        if isinstance(event, Call):
            calls.append(event)
            finished[event.number] = frozenset(answered)
            continue
        facts = event.facts
        if isinstance(event, Reply):
            answered.add(event.call.number)
            if not event.ok:
                continue
            if facts is not None:
                for violation in _at_reply(event, facts, calls):
                    found.setdefault(event.call.number, violation)
            promises.append(event)
            continue
        for promise in promises:
            for violation in _later(promise, facts, calls, event.label, finished):
                found.setdefault(promise.call.number, violation)
    return list(found.values())


def _busy(calls: list[Call], *, server: str = "", port: str = "", ops: frozenset[str] | None = None,
          but: Call | None = None, done: frozenset[int] = frozenset()) -> bool:
    """Whether an operation invoked so far (other than ``but``, and not one of the calls numbered in
    ``done``) was changing this server or port."""
    for call in calls:
        if call is but or call.number in done or call.op == SHOW_SERVER or (ops is not None and call.op not in ops):
            continue
        if (server and call.server == server) or (port and call.port == port):
            return True
    return False


def _at_reply(reply: Reply, facts: Facts, calls: list[Call]) -> list[Violation]:
    call = reply.call
    if call.op == ATTACH and not facts.attached(call.server, call.port):
        # Nothing excuses this one: the attach answered in this very state.
        return [_violation(call, f"answered success, but port {call.port} was not attached to server "
                                 f"{call.server} when it answered ({_why_not(facts, call.server, call.port)})")]
    if call.op == SHOW_SERVER:
        return _server_answer(reply, facts, calls, "when it answered")
    if call.op == DELETE_PORT and call.port in facts.ports:
        # what named the port (a guest device, a cache) may still be let go by the event it sent
        return [_violation(call, f"answered success, but port {call.port} still existed when it answered")]
    return []


def _later(reply: Reply, facts: Facts, calls: list[Call], when: str,
           finished: dict[int, frozenset[int]] | None = None) -> list[Violation]:
    """``finished``: for each call, the calls that had answered before it was invoked."""
    finished = finished or {}
    call = reply.call
    if call.op == ATTACH:
        if facts.attached(call.server, call.port):
            return []
        # one that had answered before the attach was invoked cannot have removed what it attached
        done = finished.get(call.number, frozenset())
        if _busy(calls, server=call.server, ops=_REMOVE_BY_SERVER, done=done) or _busy(
                calls, port=call.port, ops=_REMOVE_BY_PORT, done=done):
            return []
        return [_violation(call, f"answered success, but in {when} port {call.port} is not attached to server "
                                 f"{call.server} ({_why_not(facts, call.server, call.port)}) and no later "
                                 "operation removed it")]
    if _busy(calls, server=call.server, port=call.port, ops=frozenset({OUT_OF_BAND})):
        return []  # changed behind the services' backs: no reply promised anything about that
    if call.op == DELETE_PORT:
        left = (["the port exists"] if call.port in facts.ports else []) + list(facts.port_named.get(call.port, ()))
        if left:
            return [_violation(call, f"answered success, but in {when} port {call.port} is not gone: "
                                     + "; ".join(left))]
        return []
    if call.op == SHOW_SERVER and reply.answer == GONE:
        return _server_answer(reply, facts, calls, f"in {when}")
    return []


def _server_answer(reply: Reply, facts: Facts, calls: list[Call], when: str) -> list[Violation]:
    call, server = reply.call, reply.call.server
    if reply.answer == GONE:
        # a delete that succeeded leaves nothing behind: nothing names the server any more
        left = list(facts.named.get(server, ()))
        if server in facts.servers:
            left.insert(0, "it is live")
        if left:
            return [_violation(call, f"answered that server {server} is gone, but {when}: " + "; ".join(left))]
        return []
    if reply.answer != "ACTIVE":
        return []
    state = facts.servers.get(server)
    wrong = []
    if state is None:
        wrong.append("it is not live")
    else:
        _, _, baremetal, where = state
        if not where:
            wrong.append("it has no " + ("node" if baremetal else "host"))
        elif baremetal and facts.nodes.get(server) != (where, bms.ACTIVE) and not _node_busy(calls, server, where):
            wrong.append(f"its node {where} is " + ("not naming it" if facts.nodes.get(server) is None
                                                     else f"{facts.nodes[server][1]}, naming it"))
        mine = sorted({port for port, device in facts.ports.items() if device == server}
                      | {port for owner, port in facts.cached if owner == server})
        for port in mine:
            if not facts.attached(server, port) and not _busy(calls, server=server, ops=_REMOVE_BY_SERVER) \
                    and not _busy(calls, port=port):
                wrong.append(f"its port {port} is not attached ({_why_not(facts, server, port)})")
        # (which ports the boot had is not known here: any port taken away meanwhile excuses it)
        if call.for_boot and not mine and not any(
                c.op in _REMOVE_BY_PORT or (c.op in _REMOVE_BY_SERVER and c.server == server) for c in calls):
            wrong.append("it has no port")
    if wrong:
        return [_violation(call, f"answered that server {server} is ACTIVE, but {when}: " + "; ".join(wrong))]
    return []


def _node_busy(calls: list[Call], server: str, node: str) -> bool:
    return any((call.op in (CHANGE_NODE, OUT_OF_BAND) and call.node == node)
               or (call.op in (DELETE_SERVER, OUT_OF_BAND) and call.server == server) for call in calls)


def _why_not(facts: Facts, server: str, port: str) -> str:
    if port not in facts.ports:
        return "the port does not exist"
    if facts.ports[port] != server:
        return f"the port is bound to {facts.ports[port] or 'nothing'}"
    if (server, port) not in facts.cached:
        return "the server's network info does not list it"
    if server not in facts.servers:
        return "the server is gone"
    return "it is not plugged"


def _violation(call: Call, evidence: str) -> Violation:
    resources = {key: value for key, value in (("server", call.server), ("port", call.port), ("node", call.node))
                 if value}
    return Violation(INVARIANT, {"operation": call.op, **resources}, f"{call.describe()}: {evidence}")
