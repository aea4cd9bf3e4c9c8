"""A fake driver's state on disk, as an append-only journal of key changes.

Rewriting the whole state file on every plug cost ~1 ms per change, most of
a VM cycle's file work. A line per change costs microseconds; loading
replays the lines and rewrites them compacted. A line is flushed before the
change returns, so a control-plane crash (the process dying) loses nothing.

A read-only journal (``tether check``'s) loads the same state and writes nothing: no compaction,
and a change is refused.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import IO, Any


class ReadOnlyJournal(Exception):
    """A change was made to a journal opened only to be read."""


class Journal:
    def __init__(self, path: Path, *, read_only: bool = False) -> None:
        self._path = path
        self._file: IO[str] | None = None
        self.read_only = read_only

    def load(self) -> dict[str, Any]:
        """The state the journal holds, compacted back onto disk (unless read-only)."""
        state: dict[str, Any] = {}
        if self._path.exists():
            for line in self._path.read_text().splitlines():
                try:
                    entry = json.loads(line)
                except json.JSONDecodeError:
                    break  # a torn last line: the change it described never returned
                if entry.get("value") is None:
                    state.pop(entry["key"], None)
                else:
                    state[entry["key"]] = entry["value"]
        if self.read_only:
            return state
        tmp = self._path.with_suffix(".tmp")
        tmp.write_text("".join(json.dumps({"key": key, "value": value}) + "\n" for key, value in state.items()))
        os.replace(tmp, self._path)
        return state

    def put(self, key: str, value: Any) -> None:
        self._append({"key": key, "value": value})

    def delete(self, key: str) -> None:
        self._append({"key": key, "value": None})

    def _append(self, entry: dict[str, Any]) -> None:
        if self.read_only:
            raise ReadOnlyJournal(f"{self._path} was opened read-only")
        if self._file is None:
            self._file = self._path.open("a", encoding="utf-8")
        self._file.write(json.dumps(entry) + "\n")
        self._file.flush()
