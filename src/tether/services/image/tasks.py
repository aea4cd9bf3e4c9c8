"""Glance's tasks API (``/v2/tasks``), admin-only as glance's ``tasks_api_access`` policy says.

Expired tasks are gone from every answer, as glance's periodic cleanup removes
them; they are deleted the next time a task is made.
"""

from __future__ import annotations

import random
from typing import Any

from tether.domain import image_tasks as rules
from tether.domain.errors import image as errors
from tether.domain.ids import new_uuid
from tether.domain.image_tasks import ImageTask
from tether.runtime.runtime import Runtime
from tether.services.context import RequestContext
from tether.store import repos
from tether.store.database import Store


def _admin(ctx: RequestContext) -> None:
    if not ctx.is_admin:
        raise errors.PolicyForbidden(action="tasks_api_access")


class ImageTasks:
    """``ImageTasks(store, runtime, rng)``."""

    def __init__(self, store: Store, runtime: Runtime, rng: random.Random) -> None:
        self.store = store
        self.rt = runtime
        self.rng = rng

    async def create(self, ctx: RequestContext, body: Any) -> ImageTask:
        _admin(ctx)
        kind, task_input = rules.check_request(body)
        now = self.rt.now()
        # The outcome is known before any work starts (nothing is fetched), so the task is recorded
        # as it ends: a client polling for success or failure sees the answer at once.
        task = ImageTask(id=new_uuid(self.rng), type=kind, owner=ctx.project_id or "", status="failure",
                         input=task_input, message=rules.outcome(task_input), created_at=now, updated_at=now,
                         expires_at=now + rules.TIME_TO_LIVE)
        async with self.store.begin() as conn:
            for old in await repos.image_tasks.find(conn):
                if old.expires_at is not None and old.expires_at <= now:
                    await repos.image_tasks.delete(conn, old.id)
            await repos.image_tasks.add(conn, task)
        return task

    async def get(self, ctx: RequestContext, task_id: str) -> ImageTask:
        _admin(ctx)
        async with self.store.begin() as conn:
            task = await repos.image_tasks.get(conn, task_id)
        if task is None or self._expired(task):
            raise errors.ImageNotFound(f"Task with the given id {task_id} not found")
        return task

    async def list(self, ctx: RequestContext) -> list[ImageTask]:
        _admin(ctx)
        async with self.store.begin() as conn:
            tasks = await repos.image_tasks.find(conn)
        return [task for task in tasks if not self._expired(task)]

    def _expired(self, task: ImageTask) -> bool:
        return task.expires_at is not None and task.expires_at <= self.rt.now()
