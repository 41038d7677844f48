"""Property-based requests over the OpenAPI schema (schemathesis): whatever a client sends, the API answers with
a documented status and never a 5xx.

Runs in-process against the ASGI app, on the embedded default and on PostgreSQL (which refuses some values SQLite
stores, such as NUL in text or numbers past 64 bits), in open mode so every operation is reachable past
authentication, with a job already stored so that some generated ids and listings touch real rows. Examples
are bounded per operation and the run is derandomised (and keeps no example database), so every run sends the
same requests in the same short time.
"""

from __future__ import annotations

import json

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error

from app.db import session_scope
from app.jobs import service
from tests.support.pdfs import text_pdf

pytestmark = pytest.mark.integration

MAX_EXAMPLES = 25


def test_no_generated_request_makes_the_api_fail(dsx_backend: str) -> None:
    from app.main import create_app

    with session_scope() as session:
        service.create_job(session, data=text_pdf(["Supply voltage VDD 2.7 5.5 V"]), filename="seed.pdf",
                           parameters=json.dumps(["Supply voltage"]))
    schema = schemathesis.openapi.from_asgi("/openapi.json", create_app())
    failures: dict[str, str] = {}
    operations = 0
    for loaded in schema.get_all_operations():
        operation = loaded.ok()
        operations += 1

        @given(case=operation.as_strategy())
        @settings(max_examples=MAX_EXAMPLES, deadline=None, derandomize=True, database=None,
                  suppress_health_check=list(HealthCheck))
        def exercise(case) -> None:  # noqa: ANN001
            case.call_and_validate(checks=[not_a_server_error])

        try:
            exercise()
        except Exception as exc:  # noqa: BLE001 - collect every operation's failure, then report them all
            failures[operation.label] = f"{type(exc).__name__}: {str(exc)[:1500]}"
    assert operations >= 10  # the schema was really loaded
    assert failures == {}
