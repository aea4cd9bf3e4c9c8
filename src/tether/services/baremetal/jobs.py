"""The registry of the conductor's jobs in this process: one job per node, retired when a newer one starts."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from tether.domain.baremetal import Node
from tether.runtime.runtime import Runtime
from tether.services.baremetal.transitions import NodeChanged
from tether.store import repos
from tether.store.database import Store

# A job's work on one node: ``body(node uuid, token)``.
JobBody = Callable[[str, object], Coroutine[Any, Any, None]]


class JobFailed(Exception):
    """A conductor job gives up; the message is the node's last_error as it stands."""


class ConductorJobs:
    def __init__(self, store: Store, rt: Runtime) -> None:
        self.store = store
        self.rt = rt
        # node uuid -> the token of the one conductor job working on it in this process. Shared
        # in-memory state: the race explorer replaces this dict with one that records every access
        # (tether.sim.explore.schedule) and reads it into its state key, so every use goes through
        # ``self.tokens`` and nothing keeps a reference of its own.
        self.tokens: dict[str, object] = {}

    def start(self, uuid: str, kind: str, body: JobBody) -> None:
        """Run ``body(uuid, token)`` in the background; a newer job for the node retires it."""
        token = object()
        self.tokens[uuid] = token
        self.rt.spawn(self._run(uuid, token, body), name=f"baremetal.{kind}:{uuid}")

    async def _run(self, uuid: str, token: object, body: JobBody) -> None:
        try:
            await body(uuid, token)
        except NodeChanged:
            # rule 3: the node moved on (undeployed, deleted, failed by a reconciler); not ours now.
            self.rt.note(f"node {uuid}: job stopped, the node changed under it")
        finally:
            if self.tokens.get(uuid) is token:
                del self.tokens[uuid]

    def running(self, uuid: str) -> bool:
        return uuid in self.tokens

    def retire(self, uuid: str) -> None:
        """Whatever job still works on the node finds it no longer its own (rule 3) and ends."""
        self.tokens.pop(uuid, None)

    async def current(self, uuid: str, token: object, states: tuple[str, ...]) -> Node:
        """The node, if this job still owns it and it is in one of ``states``; else NodeChanged."""
        if self.tokens.get(uuid) is not token:
            raise NodeChanged(uuid)
        async with self.store.begin() as conn:
            node = await repos.nodes.get(conn, uuid)
        if node is None or node.provision_state not in states:
            raise NodeChanged(uuid)
        return node
