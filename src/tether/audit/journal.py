"""The repair journal: one JSON line per decision, the one before an action written before it."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from tether.audit.findings import Finding


class Journal:
    def __init__(self, path: Path | None) -> None:
        self.path = path

    def write(self, status: str, finding: Finding, *, before: Any = None, reason: str | None = None) -> None:
        if self.path is None:
            return
        entry = {"time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "status": status,
                 "finding": finding.as_dict(), "action": finding.repair.as_dict(), "before": before,
                 "reason": reason}
        with self.path.open("a") as out:
            out.write(json.dumps(entry, sort_keys=True) + "\n")
            out.flush()
            # The line must be on disk before the action it announces.
            os.fsync(out.fileno())
