"""Blobs in a database table: the production default, since every API replica and worker already reaches the
database, and uploads are capped (``DSX_MAX_UPLOAD_BYTES``) well below what a Postgres ``bytea`` holds.

Given the caller's session, ``put`` writes in its transaction, so the bytes commit together with the row that
names them (one transaction, one connection for a whole submission); without one it uses its own short session,
committed before it returns.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.blobs import BlobNotFound
from app.blobs.models import BlobContent
from app.db import dialect_insert, session_scope


class DatabaseBlobStore:
    def put(self, sha256: str, data: bytes, session: Session | None = None) -> None:
        if session is not None:
            _insert(session, sha256, data)
            return
        with session_scope() as own:
            _insert(own, sha256, data)

    def get(self, sha256: str) -> bytes:
        with session_scope() as session:
            data = session.scalar(select(BlobContent.data).where(BlobContent.sha256 == sha256))
        if data is None:
            raise BlobNotFound(sha256)
        return bytes(data)


def _insert(session: Session, sha256: str, data: bytes) -> None:
    insert = dialect_insert(session)
    session.execute(insert(BlobContent).values(sha256=sha256, data=data)
                    .on_conflict_do_nothing(index_elements=["sha256"]))
