"""Blobs in a database table: the production default, since every API replica and worker already reaches the
database, and uploads are capped (``DSX_MAX_UPLOAD_BYTES``) well below what a Postgres ``bytea`` holds.

Each call uses its own short session, so a blob is committed before the job row that names it is visible.
"""

from __future__ import annotations

from sqlalchemy import select

from app.blobs import BlobNotFound
from app.blobs.models import BlobContent
from app.db import dialect_insert, session_scope


class DatabaseBlobStore:
    def put(self, sha256: str, data: bytes) -> None:
        with session_scope() as session:
            insert = dialect_insert(session)
            session.execute(insert(BlobContent).values(sha256=sha256, data=data)
                            .on_conflict_do_nothing(index_elements=["sha256"]))

    def get(self, sha256: str) -> bytes:
        with session_scope() as session:
            data = session.scalar(select(BlobContent.data).where(BlobContent.sha256 == sha256))
        if data is None:
            raise BlobNotFound(sha256)
        return bytes(data)
