"""Telling compute what changed: the ``notify`` callable the network service was given, made safe to call."""

from __future__ import annotations

import logging

from tether.services.network.events import Event, Notify

log = logging.getLogger(__name__)


class Notifier:
    def __init__(self, notify: Notify | None) -> None:
        self._notify = notify

    def send(self, events: list[Event]) -> None:
        """Tell compute, after the commit; a failing receiver must not undo what is done."""
        if not events or self._notify is None:
            return
        try:
            self._notify(events)
        except Exception:
            log.exception("could not deliver %s", events)
