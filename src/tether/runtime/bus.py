"""The in-process message bus: typed events published after the change they report, to the
handlers subscribed where the cloud is assembled (after cosmicpython's message bus)."""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable
from typing import Any, TypeVar

log = logging.getLogger(__name__)

E = TypeVar("E")


class MessageBus:
    def __init__(self) -> None:
        self._handlers: dict[type, list[Callable[[Any], None]]] = defaultdict(list)

    def subscribe(self, event_type: type[E], handler: Callable[[E], None]) -> None:
        """``handler(event)`` for every event of ``event_type`` published from now on, in order.

        Handlers run in the publisher's turn and must not block: work that takes
        time is spawned (``Runtime.spawn``).
        """
        self._handlers[event_type].append(handler)

    def publish(self, event: object) -> None:
        # What is published is already committed: a failing handler must not undo it, nor
        # keep the other handlers from hearing of it.
        for handler in self._handlers.get(type(event), ()):
            try:
                handler(event)
            except Exception:
                log.exception("handler %s failed on %s", getattr(handler, "__qualname__", handler), event)
