"""Run one extraction in-process on the embedded store: the same admission and pipeline as the API."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from pathlib import Path

from sqlalchemy import func, select

from app import migrate
from app.db import session_scope
from app.documents.sandbox import open_index_limited
from app.flows.job_view import job_out
from app.jobs import service
from app.tables.jobs import Extraction

ProgressCallback = Callable[[int, int], None]  # (parameters answered, parameters requested)
POLL_INTERVAL_S = 0.25
log = logging.getLogger(__name__)


def extract_local(pdf: Path, parameters: list[str], *, model: str | None = None, engine: str = "auto",
                  on_progress: ProgressCallback | None = None) -> dict:
    """The job result (as the API returns it) of one extraction run to its end in this process.

    With ``on_progress`` the pipeline runs in a thread while this one reports how many parameters have an
    answer, so a terminal can show progress without the pipeline knowing about it."""
    index_ahead = _build_index_ahead(pdf)
    # Loaded before the job is stored, so that the job's own times never include loading the pipeline.
    from app.flows import extraction as extraction_flow  # loads LiteLLM (seconds) while the index builds

    migrate.upgrade()
    with session_scope() as session:
        job, _ = service.create_job(
            session, data=pdf.read_bytes(), filename=pdf.name, parameters=json.dumps(parameters),
            engine=engine, model=model,
        )
        job_id = job.id
    index_ahead.join()
    if on_progress is None:
        extraction_flow.run(job_id)
    else:
        _run_reporting(extraction_flow.run, job_id, len(parameters), on_progress)
    with session_scope() as session:
        return json.loads(job_out(session, service.get_job(session, job_id)).model_dump_json())


def _build_index_ahead(pdf: Path) -> threading.Thread:
    """Start building the PDF's index in a child process, so that it runs on another core while this process
    loads the pipeline: importing LiteLLM alone takes longer than indexing a typical datasheet. The pipeline then
    finds the index in the cache. A build that fails here is left to the pipeline, which reports it on the job."""

    def build() -> None:
        try:
            open_index_limited(pdf, in_child=True)
        except Exception as exc:  # noqa: BLE001 - the pipeline builds again and fails the job with the cause
            log.debug("index built ahead of the pipeline failed: %s", exc)

    thread = threading.Thread(target=build, name="index-ahead", daemon=True)
    thread.start()
    return thread


def _run_reporting(run: Callable[[str], None], job_id: str, total: int, on_progress: ProgressCallback) -> None:
    failure: list[BaseException] = []

    def work() -> None:
        try:
            run(job_id)
        except BaseException as exc:  # re-raised in the caller's thread
            failure.append(exc)

    worker = threading.Thread(target=work, name=f"extract-{job_id[:8]}", daemon=True)
    worker.start()
    while worker.is_alive():
        on_progress(_answered(job_id), total)
        worker.join(POLL_INTERVAL_S)
    if failure:
        raise failure[0]
    on_progress(total, total)


def _answered(job_id: str) -> int:
    with session_scope() as session:
        query = select(func.count(func.distinct(Extraction.parameter_id))).where(Extraction.job_id == job_id)
        return int(session.scalar(query) or 0)
