"""After a restart: every stack action that was in progress goes on from its rows (rule 5)."""

from __future__ import annotations

from dataclasses import dataclass

from tether.domain.orchestration import stack_states
from tether.domain.orchestration.stack_states import IN_PROGRESS
from tether.services.orchestration.engine import Engine
from tether.store.database import Store

ACTIONS_IN_PROGRESS = [stack_states.state(action, IN_PROGRESS)
                       for action in (stack_states.CREATE, stack_states.UPDATE, stack_states.DELETE,
                                      stack_states.ROLLBACK)]


@dataclass(eq=False)
class StackRecovery:
    store: Store
    engine: Engine

    async def recover(self) -> None:
        async with self.store.begin() as uow:
            stacks = await uow.stacks.find(state=ACTIONS_IN_PROGRESS, order_by=("created_at", "id"))
            resources = {stack.id: await uow.stack_resources.find(stack_id=stack.id, state=ACTIONS_IN_PROGRESS,
                                                                  order_by=("created_at", "id"))
                         for stack in stacks}
        for stack in stacks:
            # The operations that ran these resources died with the last process: run them again
            # (each resumes from what its row records), then the stack's loop.
            for resource in resources[stack.id]:
                self.engine.resume(stack, resource, resource.action)
            self.engine.start(stack)
