"""Typed errors that carry the words OpenStack uses.

Each service has a module of its own; an error's class says which service's
envelope it travels in and its ``status`` is the one place its HTTP status is
decided. Messages keep upstream's text, since operators search for it.
"""

from __future__ import annotations

from typing import Any, ClassVar


class TetherError(Exception):
    service: ClassVar[str] = "tether"
    status: ClassVar[int] = 500
    template: ClassVar[str] = "An unknown exception occurred."

    def __init__(self, message: str | None = None, **kwargs: Any) -> None:
        self.kwargs = kwargs
        self.message = message if message is not None else self.template.format(**kwargs)
        super().__init__(self.message)

    @property
    def kind(self) -> str:
        return type(self).__name__
