"""A job that raises says why: deterministic data errors fail on the first delivery with their cause, other errors
are retried with the cause kept, and a job that finally fails as poison names the last one."""

from __future__ import annotations

import logging

import pytest
from sqlalchemy.exc import DataError, OperationalError

from app.config import reset_settings
from app.flows import extraction as pipeline
from tests.support.jobs import create, result
from tests.support.pdfs import text_pdf

PDF = text_pdf(["Supply voltage VDD 2.7 5.5 V"])


def _raise(exc: Exception):  # noqa: ANN202
    def run_parameter(**_kwargs: object) -> None:
        raise exc

    return run_parameter


def _job_row(job_id: str):  # noqa: ANN202
    from app.db import session_scope
    from app.tables.jobs import Job

    with session_scope() as session:
        return session.get(Job, job_id)


def test_a_data_error_fails_the_first_delivery_with_its_cause(dsx_env, monkeypatch: pytest.MonkeyPatch,  # noqa: ANN001
                                                              caplog: pytest.LogCaptureFixture) -> None:
    job_id = create(PDF, ["Supply voltage"])
    refused = DataError("INSERT INTO spans ...", {}, Exception('invalid byte sequence for encoding "UTF8": 0x00'))
    monkeypatch.setattr(pipeline.engines, "run_parameter", _raise(refused))

    with caplog.at_level(logging.ERROR):
        assert pipeline.run(job_id) == "failed"

    job = result(job_id)
    assert job["failure_code"] == "invalid_job_data"
    assert job["failure_detail"].startswith("DataError: ")
    assert "0x00" in job["failure_detail"] and "delivery 1" in job["failure_detail"]
    assert "[SQL:" not in job["failure_detail"]  # the cause, not the statement and its parameters
    assert _job_row(job_id).deliveries == 1
    assert any(job_id in r.getMessage() and "DataError" in r.getMessage() for r in caplog.records)


def test_a_transient_error_is_retried_and_a_poison_job_names_it(dsx_env, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    monkeypatch.setenv("DSX_MAX_DELIVERIES", "2")
    reset_settings()
    job_id = create(PDF, ["Supply voltage"])
    monkeypatch.setattr(pipeline.engines, "run_parameter",
                        _raise(OperationalError("SELECT 1", {}, Exception("server closed the connection"))))

    for delivery in (1, 2):
        with pytest.raises(OperationalError):
            pipeline.run(job_id)
        row = _job_row(job_id)
        assert row.status == "running" and row.failure_code is None
        assert row.failure_detail == f"delivery {delivery}: OperationalError: (builtins.Exception) server closed " \
                                     "the connection"
        assert row.lease_owner is None  # released, so the sweeper can deliver it again without waiting

    assert pipeline.run(job_id) == "failed"
    job = result(job_id)
    assert job["failure_code"] == "poison_job"
    assert job["failure_detail"].startswith("Delivered 3 times without finishing.")
    assert "delivery 2: OperationalError" in job["failure_detail"]
    assert "server closed the connection" in job["failure_detail"]


def test_a_job_that_succeeds_after_a_retry_carries_no_stale_failure(dsx_env, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    job_id = create(PDF, ["Supply voltage"])
    with monkeypatch.context() as patch:
        patch.setattr(pipeline.engines, "run_parameter", _raise(RuntimeError("provider hiccup")))
        with pytest.raises(RuntimeError):
            pipeline.run(job_id)
    assert _job_row(job_id).failure_detail == "delivery 1: RuntimeError: provider hiccup"

    assert pipeline.run(job_id) in ("done", "needs_review")
    job = result(job_id)
    assert job["failure_detail"] is None and job["failure_code"] is None
