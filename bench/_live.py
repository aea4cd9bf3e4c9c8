"""Start a `tether serve` for a benchmark and stop it afterwards."""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.live import LiveCloud, start


@contextmanager
def live_cloud(*extra: str, db: str | None = None, deploy_seconds: float = 0.0,
               clean_seconds: float = 0.0, python: str = sys.executable) -> Iterator[LiveCloud]:
    """``python``: the interpreter whose installed Tether serves (another build's, to compare against)."""
    with tempfile.TemporaryDirectory(prefix="tether-bench-") as directory:
        cloud = start(Path(directory), *extra, db=db, deploy_seconds=deploy_seconds, clean_seconds=clean_seconds,
                      python=python)
        try:
            # Nova's default quotas (ten instances) would refuse a benchmark's concurrency of 32.
            cloud.lift_compute_quotas(missing_ok=True)
            yield cloud
        finally:
            cloud.stop()
