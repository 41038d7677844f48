"""Blobs as files under one directory (``<root>/ab/abcdef….pdf``): the embedded default, one host only."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from app.blobs import BlobNotFound

if TYPE_CHECKING:
    from sqlalchemy.orm import Session


class LocalBlobStore:
    def __init__(self, root: Path) -> None:
        self.root = root

    def path(self, sha256: str) -> Path:
        return self.root / sha256[:2] / f"{sha256}.pdf"

    def put(self, sha256: str, data: bytes, session: Session | None = None) -> None:
        write_atomically(self.path(sha256), data)

    def get(self, sha256: str) -> bytes:
        try:
            return self.path(sha256).read_bytes()
        except FileNotFoundError as exc:
            raise BlobNotFound(sha256) from exc


def write_atomically(path: Path, data: bytes) -> None:
    """Write through a temp file and a rename, so a reader never sees half a file."""
    if path.exists():
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
