"""Where uploaded PDFs live, behind one small interface, so API replicas and workers on other hosts read the same
bytes: this host's directory (embedded default), a database table (production default: every host already
reaches the database) or an S3-compatible object store (large deployments).

Blobs are content-addressed by sha256 and immutable, so ``put`` of bytes already stored is a no-op and readers
may cache a copy forever. The ``blobs`` table keeps each PDF's metadata whichever store holds its bytes.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Protocol

from app.config import get_settings

if TYPE_CHECKING:
    from sqlalchemy.orm import Session


class BlobNotFound(LookupError):
    """The store holds no bytes for this sha256."""


class BlobStore(Protocol):
    def put(self, sha256: str, data: bytes, session: Session | None = None) -> None:
        """Store ``data`` under ``sha256`` (a no-op when already stored). Raises on failure: nothing half-written
        is ever readable. A store in the database writes in ``session``'s transaction when given one, so the
        bytes commit with the row that names them; the others ignore it."""

    def get(self, sha256: str) -> bytes:
        """The stored bytes; ``BlobNotFound`` if there are none."""


def blob_store() -> BlobStore:
    settings = get_settings()
    kind = settings.resolved_blob_store
    if kind == "local":
        from app.blobs.local import LocalBlobStore

        return LocalBlobStore(settings.blob_dir)
    if kind == "database":
        from app.blobs.database import DatabaseBlobStore

        return DatabaseBlobStore()
    return _s3_store(settings.s3_endpoint_url, settings.s3_bucket, settings.s3_prefix, settings.s3_region,
                     settings.s3_access_key_id, settings.s3_secret_access_key)


@lru_cache(maxsize=4)
def _s3_store(*_settings_that_decide_it: str | None) -> BlobStore:
    # One boto3 client per configuration (clients are thread-safe and slow to build); the arguments are the key.
    from app.blobs.s3 import S3BlobStore

    return S3BlobStore.from_settings(get_settings())
