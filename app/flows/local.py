"""Run one extraction in-process on the embedded store: the same admission and pipeline as the API."""

from __future__ import annotations

import json
from pathlib import Path

from app import migrate
from app.db import session_scope
from app.flows import extraction as extraction_flow
from app.flows.job_view import job_out
from app.jobs import service


def extract_local(pdf: Path, parameters: list[str], *, model: str | None = None, engine: str = "auto") -> dict:
    migrate.upgrade()
    with session_scope() as session:
        job, _ = service.create_job(
            session, data=pdf.read_bytes(), filename=pdf.name, parameters=json.dumps(parameters),
            engine=engine, model=model,
        )
        job_id = job.id
    extraction_flow.run(job_id)
    with session_scope() as session:
        return json.loads(job_out(session, service.get_job(session, job_id)).model_dump_json())
