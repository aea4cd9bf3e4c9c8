"""The agents neutron would list for this cloud: an L2 agent on each hypervisor, the L3 agent that plugs
routers' ports and the bare-metal agent (networking-baremetal's ``ironic-neutron-agent``). They are part
of this process, so each is alive while the process serves, and its heartbeat is now."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from tether.domain.errors.network import AgentNotFound
from tether.runtime.runtime import Runtime
from tether.services.network.service_ports import L3_AGENT_HOST
from tether.store import repos
from tether.store.database import Store

_NAMESPACE = uuid.UUID("0c7a3f5e-2b1d-4e8f-9a6c-7d5e4f3a2b1c")
L2_AGENT = ("Open vSwitch agent", "neutron-openvswitch-agent", "N/A")
BAREMETAL_AGENT = ("Baremetal Node", "ironic-neutron-agent", "N/A")
BAREMETAL_HOST = "tether-baremetal"
L3_AGENT = ("L3 agent", "neutron-l3-agent", "l3_agent")


@dataclass(frozen=True)
class AgentRecord:
    id: str
    agent_type: str
    binary: str
    topic: str
    host: str
    admin_state_up: bool
    alive: bool
    configurations: dict[str, Any]
    started_at: float
    heartbeat_timestamp: float


@dataclass(eq=False)
class AgentRecords:
    store: Store
    rt: Runtime
    started_at: float

    async def list_agents(self) -> list[AgentRecord]:
        async with self.store.begin() as conn:
            hypervisors = await repos.hypervisors.find(conn, order_by=("hostname",))
        now = self.rt.now()
        found = [self._record(L2_AGENT, h.hostname, h.state == "up", {"bridge_mappings": {"physnet1": "br-ex"}},
                              now) for h in hypervisors]
        found.append(self._record(L3_AGENT, L3_AGENT_HOST, True, {"agent_mode": "legacy"}, now))
        found.append(self._record(BAREMETAL_AGENT, BAREMETAL_HOST, True, {"bridge_mappings": {}}, now))
        return found

    async def get_agent(self, agent_id: str) -> AgentRecord:
        for agent in await self.list_agents():
            if agent.id == agent_id:
                return agent
        raise AgentNotFound(id=agent_id)

    def _record(self, kind: tuple[str, str, str], host: str, alive: bool, configurations: dict[str, Any],
                now: float) -> AgentRecord:
        agent_type, binary, topic = kind
        return AgentRecord(id=str(uuid.uuid5(_NAMESPACE, f"{binary}@{host}")), agent_type=agent_type, binary=binary,
                           topic=topic, host=host, admin_state_up=True, alive=alive, configurations=configurations,
                           started_at=self.started_at, heartbeat_timestamp=now)
