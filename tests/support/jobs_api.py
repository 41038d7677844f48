"""Submitting to the jobs API and counting what it stored, for tests of admission and its refusals."""

from __future__ import annotations

import json

from fastapi.testclient import TestClient
from sqlalchemy import func, select

from app.blobs.models import BlobContent
from app.config import get_settings
from app.db import session_scope
from app.documents.models import Blob
from app.tables.jobs import Job, JobParameter


def post(client: TestClient, data: bytes, parameters: object = ("Supply voltage",), headers: dict | None = None,
         **fields: str):
    form = {"parameters": parameters if isinstance(parameters, str) else json.dumps(list(parameters)), **fields}
    return client.post("/v1/jobs", files={"file": ("ds.pdf", data, "application/pdf")}, data=form,
                       headers=headers or {})


def stored_rows() -> tuple[int, int, int]:
    with session_scope() as session:
        return (
            session.scalar(select(func.count()).select_from(Job)),
            session.scalar(select(func.count()).select_from(JobParameter)),
            session.scalar(select(func.count()).select_from(Blob)),
        )


def stored_blobs() -> list[str]:
    """Every PDF the configured blob store holds: files of the local store, rows of the database store."""
    settings = get_settings()
    if settings.resolved_blob_store == "database":
        with session_scope() as session:
            return list(session.scalars(select(BlobContent.sha256)))
    return [str(p) for p in settings.blob_dir.rglob("*") if p.is_file()]
