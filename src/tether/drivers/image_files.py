"""Image data on disk: glance's filesystem store and its staging area, under the data dir.

Data arrives as a stream and is written chunk by chunk into a temporary file
beside its final place, hashed on the way (md5 for ``checksum``, sha512 for
``os_hash_value``), and renamed into place once complete, so a reader never
sees half an image and an interrupted transfer leaves nothing behind.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import tempfile
import weakref
from collections.abc import AsyncIterable, Iterator
from pathlib import Path
from typing import BinaryIO

from tether.domain.image import ImageData

CHUNK = 64 * 1024


class ImageFiles:
    """``ImageFiles(root)``: data under ``root``; without one, under a temporary
    directory made on first use and removed with this object (in-memory clouds)."""

    def __init__(self, root: Path | None = None) -> None:
        self._root = root

    @property
    def root(self) -> Path:
        if self._root is None:
            self._root = Path(tempfile.mkdtemp(prefix="tether-images-"))
            weakref.finalize(self, shutil.rmtree, self._root, True)
        return self._root

    def path(self, image_id: str) -> Path:
        return self.root / "store" / image_id

    def staged_path(self, image_id: str) -> Path:
        return self.root / "staging" / image_id

    def _hashes(self, image_id: str) -> Path:
        return self.root / "staging" / f"{image_id}.json"

    async def store(self, image_id: str, chunks: AsyncIterable[bytes]) -> ImageData:
        """Write an upload into the store."""
        return await _write(self.path(image_id), chunks)

    async def stage(self, image_id: str, chunks: AsyncIterable[bytes]) -> ImageData:
        """Write an upload into the staging area, its hashes beside it: an import then only moves it."""
        data = await _write(self.staged_path(image_id), chunks)
        self._hashes(image_id).write_text(json.dumps(dataclasses.asdict(data)))
        return data

    def import_staged(self, image_id: str) -> ImageData:
        """Move staged data into the store; what it is, as hashed when staged."""
        data = ImageData(**json.loads(self._hashes(image_id).read_text()))
        self.path(image_id).parent.mkdir(parents=True, exist_ok=True)
        os.replace(self.staged_path(image_id), self.path(image_id))
        self._hashes(image_id).unlink(missing_ok=True)
        return data

    def read(self, image_id: str, start: int = 0, length: int | None = None) -> Iterator[bytes]:
        """The stored bytes from ``start``, ``length`` of them (all to the end when None).

        The file is opened at once, so a delete that comes after the call does not cut the answer short.
        """
        source = self.path(image_id).open("rb")
        return _chunks(source, start, length)

    def delete(self, image_id: str) -> None:
        for path in (self.path(image_id), self.staged_path(image_id), self._hashes(image_id)):
            path.unlink(missing_ok=True)

    def discard_staged(self, image_id: str) -> None:
        for path in (self.staged_path(image_id), self._hashes(image_id)):
            path.unlink(missing_ok=True)


async def _write(target: Path, chunks: AsyncIterable[bytes]) -> ImageData:
    target.parent.mkdir(parents=True, exist_ok=True)
    md5, sha512, size = hashlib.md5(usedforsecurity=False), hashlib.sha512(), 0
    handle, partial = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    try:
        with os.fdopen(handle, "wb") as sink:
            async for chunk in chunks:
                sink.write(chunk)
                md5.update(chunk)
                sha512.update(chunk)
                size += len(chunk)
        os.replace(partial, target)
    except BaseException:
        Path(partial).unlink(missing_ok=True)
        raise
    return ImageData(size=size, checksum=md5.hexdigest(), os_hash_value=sha512.hexdigest())


def _chunks(source: BinaryIO, start: int, length: int | None) -> Iterator[bytes]:
    with source:
        source.seek(start)
        remaining = length
        while remaining is None or remaining > 0:
            chunk = source.read(CHUNK if remaining is None else min(CHUNK, remaining))
            if not chunk:
                return
            if remaining is not None:
                remaining -= len(chunk)
            yield chunk
