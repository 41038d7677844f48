"""ORM: PDF bytes kept in the database (the ``database`` blob store)."""

from __future__ import annotations

from sqlalchemy import LargeBinary, String
from sqlalchemy.orm import Mapped, mapped_column

from app.db import Base


class BlobContent(Base):
    __tablename__ = "blob_contents"

    sha256: Mapped[str] = mapped_column(String(64), primary_key=True)
    data: Mapped[bytes] = mapped_column(LargeBinary)
