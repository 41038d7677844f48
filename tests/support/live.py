"""A real dsx server for end-to-end tests: uvicorn plus a Celery worker as subprocesses, on a free port of
127.0.0.1, with their own temporary data dir (embedded SQLite + SQLAlchemy broker, offline model).

    with live_server(tmp_path) as server:
        httpx.get(server.base_url + "/v1/jobs")
        with server.session() as session:   # the same database, to seed rows or check what was stored
            ...

Also here: :func:`seed_flagged_extraction`, which stores a job with an answer and flags directly in a
database, so review tests do not depend on the pipeline producing flags; and :func:`spec_sheet`, a small
datasheet with a real column layout for runs through the whole pipeline.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pymupdf
from sqlalchemy.orm import Session, sessionmaker

from app import migrate
from app.cli import HTTP_KEEP_ALIVE_S
from app.db import make_engine
from app.documents.models import Blob
from app.review.models import Flag
from app.tables.jobs import Extraction, Job, JobParameter
from tests.support.paths import REPO_ROOT
from tests.support.processes import stop_group, worker_env

READY_TIMEOUT_S = 120.0
STOP_TIMEOUT_S = 5.0
WORKER_READY = " ready."  # Celery's start-up line: "celery@host ready."


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class LiveServer:
    base_url: str
    data_dir: Path
    env: dict[str, str]
    processes: dict[str, subprocess.Popen] = field(default_factory=dict)

    @property
    def database_url(self) -> str:
        return self.env["DSX_DATABASE_URL"]

    @contextmanager
    def session(self) -> Iterator[Session]:
        """A session on the server's database (committed on success)."""
        engine = make_engine(self.database_url)
        session = sessionmaker(bind=engine, expire_on_commit=False)()
        try:
            yield session
            session.commit()
        except BaseException:
            session.rollback()
            raise
        finally:
            session.close()
            engine.dispose()

    def log(self, name: str) -> str:
        path = self.data_dir / f"{name}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def logs(self, tail: int = 4000) -> str:
        return "\n".join(f"--- {name} ---\n{self.log(name)[-tail:]}" for name in self.processes)

    def alive(self) -> bool:
        return all(p.poll() is None for p in self.processes.values())

    def stop(self) -> None:
        """Stop every process this server started (each in its own process group).

        The worker is killed outright: its data dir is thrown away, and even an idle worker takes seconds to
        finish a warm or cold shutdown, which would add up over every module that starts a server."""
        worker = self.processes.get("worker")
        if worker is not None and worker.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(worker.pid, signal.SIGKILL)
            worker.wait(timeout=STOP_TIMEOUT_S)
        for process in self.processes.values():
            stop_group(process, grace_s=STOP_TIMEOUT_S)


def server_environment(data_dir: Path, overrides: Mapping[str, str] | None = None) -> dict[str, str]:
    """The parent environment without a developer's DSX_ settings, plus an isolated embedded configuration
    under ``data_dir`` (URLs pinned so API, worker and test all open the same files)."""
    env = worker_env(data_dir, f"sqlite:///{data_dir / 'dsx.db'}", f"sqla+sqlite:///{data_dir / 'broker.db'}")
    if "DSX_SHARED_DIR" in os.environ:
        env["DSX_SHARED_DIR"] = os.environ["DSX_SHARED_DIR"]
    env["PYTHONUNBUFFERED"] = "1"
    env.update(overrides or {})
    return env


@contextmanager
def live_server(
    base_dir: Path,
    *,
    worker: bool = True,
    env: Mapping[str, str] | None = None,
    ready_timeout: float = READY_TIMEOUT_S,
) -> Iterator[LiveServer]:
    """Start API (+ worker), wait until both are ready, yield, always tear down."""
    data_dir = (base_dir / "dsx-live").resolve()
    data_dir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    server = LiveServer(base_url=f"http://127.0.0.1:{port}", data_dir=data_dir,
                        env=server_environment(data_dir, env))
    migrate.upgrade(url=server.database_url)
    commands: dict[str, Sequence[str]] = {
        "api": [sys.executable, "-m", "uvicorn", "app.main:app", "--host", "127.0.0.1", "--port", str(port),
                "--log-level", "warning", "--timeout-keep-alive", str(HTTP_KEEP_ALIVE_S)],
    }
    if worker:
        commands["worker"] = [sys.executable, "-m", "app.cli", "worker", "--concurrency", "1", "--pool", "solo"]
    try:
        for name, command in commands.items():
            with (data_dir / f"{name}.log").open("wb") as log:
                server.processes[name] = subprocess.Popen(
                    command, cwd=REPO_ROOT, env=server.env, stdout=log, stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
        _wait_ready(server, ready_timeout)
        yield server
    finally:
        server.stop()


def _wait_ready(server: LiveServer, timeout: float) -> None:
    """Until /readyz answers 200 and, when there is one, the worker has said it consumes (so a test's timeout
    measures processing, not how long the worker took to import)."""
    deadline = time.monotonic() + timeout
    last = "no answer"
    api_ready = False
    while time.monotonic() < deadline:
        if not server.alive():
            raise RuntimeError(f"dsx server process exited during start-up\n{server.logs()}")
        if not api_ready:
            try:
                response = httpx.get(f"{server.base_url}/readyz", timeout=2)
                api_ready = response.status_code == 200
                last = f"HTTP {response.status_code}: {response.text[:300]}"
            except httpx.TransportError as exc:
                last = repr(exc)
        if api_ready and ("worker" not in server.processes or WORKER_READY in server.log("worker")):
            return
        time.sleep(0.2)
    raise RuntimeError(f"dsx server not ready after {timeout:.0f}s ({last})\n{server.logs()}")


def seed_flagged_extraction(
    session: Session,
    *,
    parameter: str = "Supply voltage",
    flags: Sequence[tuple[str, str]] = (("tool_bypass", "warning"),),
    tenant: str = "default",
    model: str = "offline/datasheet-reader",
    values: Sequence[dict[str, Any]] = ({"min": 2.7, "max": 5.5, "unit": "V", "conditions": []},),
    quote: str | None = "Supply voltage VDD 2.7 5.5 V",
    source_page: int | None = 3,
    filename: str = "part.pdf",
    job: Job | None = None,
    notes: str | None = None,
) -> Extraction:
    """A primary extraction of a new parameter (of ``job``, or of a new ``needs_review`` job) with one flag per
    ``(rule, severity)``, as the pipeline and detectors would have stored them."""
    if job is None:
        sha = hashlib.sha256(os.urandom(16)).hexdigest()
        session.add(Blob(sha256=sha, size_bytes=1000, page_count=12))
        job = Job(id=os.urandom(16).hex(), tenant=tenant, status="needs_review", engine="agentic", model=model,
                  blob_sha256=sha, filename=filename, request_hash="0" * 64)
        session.add(job)
        session.flush()
    position = len(job.parameters)
    row = JobParameter(job_id=job.id, position=position, name=parameter, notes=notes, status="done")
    job.parameters.append(row)
    session.flush()
    extraction = Extraction(job_id=job.id, parameter_id=row.id, attempt=1, role="primary", model=model,
                            engine="agentic", found=bool(values), values=list(values), source_page=source_page,
                            quote=quote, confidence=0.8, reason=None if values else "not in the document")
    session.add(extraction)
    session.flush()
    for rule, severity in flags:
        session.add(Flag(job_id=job.id, parameter_id=row.id, extraction_id=extraction.id, rule=rule,
                         rule_version="1", severity=severity, message=f"{rule} raised on {parameter}",
                         evidence={"span_ids": ["00000000000000aa"]}))
    session.flush()
    return extraction


SPEC_ROWS = [
    ("Parameter", "Symbol", "Min", "Typ", "Max", "Unit"),
    ("Supply voltage", "VDD", "2.7", "3.3", "5.5", "V"),
    ("Quiescent current", "IQ", "", "150", "220", "uA"),
    ("Operating temperature", "TA", "-40", "", "85", "C"),
]
COLUMNS_X = (50, 200, 270, 320, 370, 420)


def spec_sheet(marker: str = "") -> bytes:
    """A one-page datasheet whose electrical characteristics are a real column layout (cells placed at column
    positions, as a datasheet prints them); ``marker`` makes the bytes unique."""
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    page.insert_text((50, 60), f"XR1234 low-power op amp {marker}".strip(), fontsize=14)
    page.insert_text((50, 100), "Electrical characteristics", fontsize=12)
    page.insert_text((50, 118), "TA = 25 C unless otherwise noted", fontsize=9)
    for row_index, row in enumerate(SPEC_ROWS):
        for x, cell in zip(COLUMNS_X, row, strict=True):
            if cell:
                page.insert_text((x, 145 + 16 * row_index), cell, fontsize=10)
    data = doc.tobytes()
    doc.close()
    return data
