"""Content-addressed PDF storage: bytes on disk under ``blobs/ab/cdef…``, one row per sha256."""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

from sqlalchemy.orm import Session

from app.config import get_settings
from app.documents.models import Blob
from app.timeutil import utcnow


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
    # Insert-or-ignore: two uploads of the same PDF at once must both succeed and share the row.
    insert = _dialect_insert(session)
    session.execute(
        insert(Blob).values(sha256=digest, size_bytes=len(data), page_count=page_count, created_at=utcnow())
        .on_conflict_do_nothing(index_elements=["sha256"])
    )
    return session.get(Blob, digest)


def admitted_page_count(session: Session, sha256: str) -> int | None:
    """The page count recorded when these exact bytes were admitted, or None if they never were."""
    blob = session.get(Blob, sha256)
    return blob.page_count if blob is not None else None


def _dialect_insert(session: Session):  # noqa: ANN202
    if session.get_bind().dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert
    else:
        from sqlalchemy.dialects.sqlite import insert
    return insert


def read(sha256: str) -> bytes:
    return blob_path(sha256).read_bytes()
