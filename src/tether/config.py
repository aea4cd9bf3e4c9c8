"""Where a Tether cloud keeps its state on disk."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

DEFAULT_DATA_DIR = Path(os.environ.get("TETHER_DATA_DIR", "~/.local/share/tether")).expanduser()


@dataclass(frozen=True)
class DataDir:
    path: Path

    @property
    def database_file(self) -> Path:
        return self.path / "tether.db"

    @property
    def database_url(self) -> str:
        return f"sqlite:///{self.database_file}"

    @property
    def hypervisor_state(self) -> Path:
        return self.path / "hypervisor.jsonl"

    @property
    def hardware_state(self) -> Path:
        return self.path / "hardware.jsonl"

    @property
    def images(self) -> Path:
        return self.path / "images"

    @property
    def clouds_yaml(self) -> Path:
        return self.path / "clouds.yaml"

    def ensure(self) -> DataDir:
        self.path.mkdir(parents=True, exist_ok=True)
        return self
