"""Every blob store keeps the same contract, and a job runs end to end with its PDF only in a shared store:
the local directory, the database (SQLite and real Postgres) and S3 (a real moto server)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from app import migrate
from app.blobs import BlobNotFound, blob_store
from app.config import Settings, get_settings, reset_settings
from app.db import reset_engines, session_scope
from app.documents import store
from app.flows import extraction
from app.jobs import service
from tests.support.object_store import moto_server
from tests.support.pdfs import text_pdf
from tests.support.services import fresh_postgres_database

pytestmark = pytest.mark.integration

STORES = ["local", "database-sqlite", "database-postgres", "s3"]


@pytest.fixture(params=STORES)
def configured(request: pytest.FixtureRequest, dsx_env: Settings, tmp_path: Path,
               monkeypatch: pytest.MonkeyPatch) -> Iterator[Settings]:
    """dsx_env switched to one blob store (and to Postgres for the Postgres case)."""
    kind: str = request.param

    def apply(env: dict[str, str]) -> Settings:
        for key, value in env.items():
            monkeypatch.setenv(key, value)
        reset_settings()
        reset_engines()
        migrate.upgrade()
        return get_settings()

    if kind == "local":
        yield apply({"DSX_BLOB_STORE": "local"})
    elif kind == "database-sqlite":
        yield apply({"DSX_BLOB_STORE": "database"})
    elif kind == "database-postgres":
        with fresh_postgres_database() as url:
            # Production shape: Postgres and no blob setting means blobs in the database.
            settings = apply({"DSX_DATABASE_URL": url})
            assert settings.resolved_blob_store == "database"
            yield settings
            reset_engines()
    else:
        with moto_server(tmp_path / "moto.log") as s3:
            yield apply(s3.environment())


def test_put_get_round_trip_and_missing_blob(configured: Settings) -> None:
    data = text_pdf(["Supply voltage 5 V"])
    digest = store.sha256_of(data)
    blobs = blob_store()
    blobs.put(digest, data)
    blobs.put(digest, data)  # content-addressed: storing the same bytes again is harmless
    assert blobs.get(digest) == data
    with pytest.raises(BlobNotFound):
        blobs.get("0" * 64)
    assert not store.local_path("0" * 64).exists()


def test_job_runs_with_its_pdf_only_in_the_store(configured: Settings) -> None:
    data = text_pdf(["Electrical characteristics", "Supply voltage VDD 2.7 3.3 5.5 V"])
    with session_scope() as session:
        job, _ = service.create_job(session, data=data, filename="x.pdf", parameters=json.dumps(["Supply voltage"]))
        job_id = job.id
    local_files = [p for p in configured.blob_dir.rglob("*.pdf")]
    if configured.resolved_blob_store == "local":
        assert len(local_files) == 1
    else:
        # A shared store: the API host keeps no copy, so a worker elsewhere can only read the store.
        assert local_files == []
    assert extraction.run(job_id) in ("done", "needs_review")
    assert store.local_path(store.sha256_of(data)).read_bytes() == data


def test_an_s3_store_without_a_bucket_is_refused_when_settings_load(monkeypatch: pytest.MonkeyPatch) -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="DSX_S3_BUCKET"):
        Settings(blob_store="s3")
    assert Settings(blob_store="s3", s3_bucket="pdfs").resolved_blob_store == "s3"
