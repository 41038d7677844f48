"""Many machines on one: an API process and two worker processes with disjoint data directories and separate
metrics, sharing only Postgres, Redis and an S3-compatible object store (a moto server), run 50 jobs end to end.

Nothing is read from another process's disk: the API keeps no copy of an upload (it goes straight to the object
store), and each worker's data directory holds only the PDFs that worker fetched from the store itself.
"""

from __future__ import annotations

import json
import os
import re
import socket
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from app import migrate
from app.auth import keys as auth
from app.config import reset_settings
from app.db import reset_engines, session_scope
from tests.support.object_store import moto_server
from tests.support.pdfs import text_pdf
from tests.support.processes import api_process, dsx_process, wait_until, worker_env
from tests.support.services import fresh_postgres_database
from tests.support.throwaway import redis_server

pytestmark = [pytest.mark.integration, pytest.mark.slow]

JOBS = 50
DOCUMENTS = 5
TERMINAL = {"done", "needs_review", "failed", "cancelled"}
_FINISHED = re.compile(r"job ([0-9a-f]{32}) (done|needs_review) in")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _datasheet(n: int) -> bytes:
    return text_pdf([f"Regulator R{n}\nElectrical characteristics\nSupply voltage VDD 2.{n} 5.5 V\n"
                     f"Quiescent current IQ {80 + n} uA"])


@pytest.fixture
def hosts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict]:
    for key in [k for k in os.environ if k.startswith("DSX_") and not k.startswith("DSX_TEST_")]:
        monkeypatch.delenv(key)
    monkeypatch.delenv("PROMETHEUS_MULTIPROC_DIR", raising=False)
    with moto_server(tmp_path / "moto.log") as s3, redis_server() as redis, fresh_postgres_database() as database:
        shared = {"DSX_DATABASE_URL": database, "DSX_BROKER_URL": redis.url, **s3.environment()}
        # This test process plays the operator: it migrates and issues a key, then touches no file of a host.
        monkeypatch.setenv("DSX_DATA_DIR", str(tmp_path / "operator"))
        for key, value in shared.items():
            monkeypatch.setenv(key, value)
        reset_settings()
        reset_engines()
        migrate.upgrade()
        with session_scope() as session:
            key = auth.create_key(session, tenant="multi-host", roles=["submitter"], name="multi-host").key

        def host_env(name: str) -> dict[str, str]:
            data_dir = tmp_path / name
            env = worker_env(data_dir, database, redis.url)
            env.update(shared)
            env["PROMETHEUS_MULTIPROC_DIR"] = str(data_dir / "metrics")
            (data_dir / "metrics").mkdir(parents=True)
            return env

        yield {"s3": s3, "key": key, "env": host_env, "dirs": {n: tmp_path / n for n in ("api", "w1", "w2")}}
        reset_engines()
    reset_settings()


def test_fifty_jobs_across_hosts_that_share_no_disk(hosts: dict, tmp_path: Path) -> None:
    documents = [_datasheet(n) for n in range(DOCUMENTS)]
    headers = {"Authorization": f"Bearer {hosts['key']}"}
    dirs: dict[str, Path] = hosts["dirs"]
    with api_process(hosts["env"]("api"), _free_port(), tmp_path / "api.log") as base, \
            dsx_process(["worker", "--concurrency", "1"], hosts["env"]("w1"), tmp_path / "w1.log"), \
            dsx_process(["worker", "--concurrency", "1"], hosts["env"]("w2"), tmp_path / "w2.log"), \
            httpx.Client(base_url=base, headers=headers, timeout=60) as client:
        job_ids = []
        for i in range(JOBS):
            response = client.post("/v1/jobs", data={"parameters": json.dumps(["Supply voltage"])},
                                   files={"file": (f"r{i}.pdf", documents[i % DOCUMENTS], "application/pdf")})
            assert response.status_code == 202, response.text
            job_ids.append(response.json()["job_id"])

        def statuses() -> Counter[str]:
            page = client.get("/v1/jobs", params={"limit": JOBS}).json()
            assert page["total"] == JOBS
            return Counter(item["status"] for item in page["items"])

        wait_until(lambda: set(statuses()) <= TERMINAL, timeout_s=600, interval_s=2, what="all 50 jobs to finish")
        final = statuses()
    assert final["done"] + final["needs_review"] == JOBS, final

    # Both workers took part, and every job finished exactly once across them.
    finished = {name: _FINISHED.findall((tmp_path / f"{name}.log").read_text(errors="replace"))
                for name in ("w1", "w2")}
    assert all(finished.values()), {name: len(jobs) for name, jobs in finished.items()}
    assert sorted(job for jobs in finished.values() for job, _ in jobs) == sorted(job_ids)

    # The uploads are in the object store only; the API host kept none, each worker fetched its own copies.
    stored = {Path(key).stem for key in hosts["s3"].object_keys()}
    assert len(stored) == DOCUMENTS
    assert not [p for p in dirs["api"].rglob("*.pdf")]
    for name in ("w1", "w2"):
        copies = {p.stem for p in dirs[name].rglob("*.pdf")}
        assert copies and copies <= stored
        assert all(p.is_relative_to(dirs[name] / "blob-cache") for p in dirs[name].rglob("*.pdf"))
    # Separate metrics: each process wrote its own multiprocess files, none in another's directory.
    assert list((dirs["w1"] / "metrics").iterdir()) and list((dirs["w2"] / "metrics").iterdir())
