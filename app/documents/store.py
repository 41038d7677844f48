"""Content-addressed PDF storage: one ``blobs`` row per sha256, the bytes in the configured blob store
(app/blobs), and a per-host copy on disk for the readers that need a file (index build, page render), bounded
by app/documents/blob_cache.py."""

from __future__ import annotations

import hashlib
from pathlib import Path

from sqlalchemy.orm import Session

from app.blobs import BlobNotFound, blob_store
from app.blobs.local import LocalBlobStore
from app.config import get_settings
from app.db import dialect_insert
from app.documents import blob_cache
from app.documents.models import Blob
from app.timeutil import utcnow


def blob_path(sha256: str) -> Path:
    """Where the local store keeps a PDF (the embedded default's one copy)."""
    return LocalBlobStore(get_settings().blob_dir).path(sha256)


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def put(session: Session, data: bytes, page_count: int) -> Blob:
    """Store ``data`` once, and its row once. Returns the row. The bytes are stored before the row is written
    (or, in the database store, in the same transaction), so a row (and the job naming it) never points at bytes
    no host can read."""
    digest = sha256_of(data)
    blob_store().put(digest, data, session=session)
    # Insert-or-ignore: two uploads of the same PDF at once must both succeed and share the row.
    insert = dialect_insert(session)
    session.execute(
        insert(Blob).values(sha256=digest, size_bytes=len(data), page_count=page_count, created_at=utcnow())
        .on_conflict_do_nothing(index_elements=["sha256"])
    )
    return session.get(Blob, digest)


def local_path(sha256: str) -> Path:
    """A file on this host holding the PDF: the local store's own file, or this host's cached copy of a shared
    store's blob (fetched on first use). The path does not exist when no store holds the PDF."""
    settings = get_settings()
    if settings.resolved_blob_store == "local":
        return blob_path(sha256)
    try:
        return blob_cache.fetch(settings.blob_cache_dir, sha256, lambda: blob_store().get(sha256),
                                blob_cache.bounds_from(settings))
    except BlobNotFound:
        return blob_cache.cached_path(settings.blob_cache_dir, sha256)


def admitted_page_count(session: Session, sha256: str) -> int | None:
    """The page count recorded when these exact bytes were admitted, or None if they never were."""
    blob = session.get(Blob, sha256)
    return blob.page_count if blob is not None else None
