"""Reading one job for the API: the whole job read model in one unit of work on one connection.

``service.job_out`` assembles it with one query per table (job, parameters, extractions, flags, decisions,
groundings, attributions), so the number of queries does not grow with the number of parameters.
"""

from __future__ import annotations

from app.db import session_scope
from app.jobs import service
from app.jobs.schemas import JobOut


def read_job(job_id: str, tenant: str | None) -> JobOut:
    with session_scope() as session:
        return service.job_out(session, service.get_job(session, job_id, tenant))
