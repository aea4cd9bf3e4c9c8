"""What a transaction offers the repositories."""

from __future__ import annotations

from typing import Any, Protocol

from sqlalchemy.engine import Dialect


class StoreConnection(Protocol):
    """What a transaction offers: Core statements, and text the repositories rendered (``statements``)."""

    dialect: Dialect

    async def execute(self, statement: Any, parameters: Any = None) -> Any: ...

    async def run_sync(self, fn: Any, *args: Any, **kwargs: Any) -> Any: ...

    async def fetch(self, sql: str, parameters: tuple[Any, ...]) -> list[tuple[Any, ...]]: ...

    async def write(self, sql: str, parameters: tuple[Any, ...]) -> int: ...

    async def write_many(self, sql: str, rows: list[tuple[Any, ...]]) -> None: ...
