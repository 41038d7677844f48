"""Content-addressed PDF storage: bytes on disk under ``blobs/ab/cdef…``, one row per sha256."""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

from sqlalchemy.orm import Session

from app.config import get_settings
from app.documents.models import Blob


def blob_path(sha256: str) -> Path:
    return get_settings().blob_dir / sha256[:2] / f"{sha256}.pdf"


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def put(session: Session, data: bytes, page_count: int) -> Blob:
    """Store ``data`` once (atomic rename), and its row once. Returns the row."""
    digest = sha256_of(data)
    path = blob_path(digest)
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    blob = session.get(Blob, digest)
    if blob is None:
        blob = Blob(sha256=digest, size_bytes=len(data), page_count=page_count)
        session.add(blob)
        session.flush()
    return blob


def read(sha256: str) -> bytes:
    return blob_path(sha256).read_bytes()
