"""review_extraction against the database: stored spans in, flags/groundings/attributions out, idempotent."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import func, select

from app.db import session_scope
from app.detectors.severity import Severity
from app.dispatch.models import SpanRecord
from app.documents import store
from app.documents.cache import open_index
from app.flows.review import attribution_summary, review_extraction
from app.review.models import Attribution, Flag, Grounding
from app.tables.jobs import Extraction, Job, JobParameter
from tests.support.pdfs import text_pdf
from tests.support.runs import ANSWER, RunBuilder

PAGES = ["Features\nLow power", "", "", "DC Characteristics\nSupply Voltage VDD 2.7 - 5.5 V\nIDD 450 uA max"]


@pytest.fixture
def stored(dsx_env, tmp_path: Path):  # noqa: ANN001, ANN201
    """A job with one parameter and its PDF, and a factory storing an extraction plus its spans."""
    pdf = tmp_path / "sheet.pdf"
    data = text_pdf(PAGES, path=pdf)
    index = open_index(pdf)
    with session_scope() as session:
        blob = store.put(session, data, len(PAGES))
        job = Job(id="j" * 32, model="test/model", blob_sha256=blob.sha256, request_hash="h" * 64,
                  parameters=[JobParameter(position=0, name="Supply voltage", unit="V", conditions=[])])
        session.add(job)

    def make(run: RunBuilder | None, answer: dict | None = None, role: str = "primary",
             error_code: str | None = None) -> int:
        answer = answer if answer is not None else ANSWER
        with session_scope() as session:
            parameter = session.scalar(select(JobParameter))
            row = Extraction(job_id="j" * 32, parameter_id=parameter.id, role=role, model="test/model",
                             engine="agentic", found=answer.get("found", False), values=answer.get("values", []),
                             quote=answer.get("quote"), source_page=answer.get("source_page"),
                             error_code=error_code, trace_id=run.trace_id if run else None,
                             root_span_id=run.root["span_id"] if run else None)
            session.add(row)
            if run is not None:
                session.add_all(SpanRecord(**{k: v for k, v in span.items() if k != "status_message"},
                                           duration_ms=0.5) for span in run.spans)
            session.flush()
            return row.id

    return index, make


def _review(index, extraction_id: int, cross_id: int | None = None) -> list[tuple[str, str]]:  # noqa: ANN001
    with session_scope() as session:
        extraction = session.get(Extraction, extraction_id)
        parameter = session.get(JobParameter, extraction.parameter_id)
        job = session.get(Job, extraction.job_id)
        cross = session.get(Extraction, cross_id) if cross_id else None
        flags = review_extraction(session, job=job, parameter=parameter, extraction=extraction, index=index,
                                  cross_check=cross)
        return sorted((f.rule, f.severity) for f in flags)


def test_clean_answer_is_grounded_and_unflagged(stored) -> None:  # noqa: ANN001
    index, make = stored
    run = RunBuilder().navigate("build_datasheet", "search_text")
    run.submit()
    extraction_id = make(run)
    assert _review(index, extraction_id) == []
    with session_scope() as session:
        (grounding,) = session.scalars(select(Grounding).where(Grounding.extraction_id == extraction_id))
        assert (grounding.outcome, grounding.method, grounding.page) == ("grounded", "normalised", 4)
        assert grounding.boxes
        categories = [a.category for a in session.scalars(select(Attribution))]
        assert categories and set(categories) == {"ok"}


def test_bypass_with_fabricated_quote_is_flagged_with_evidence_and_idempotent(stored) -> None:  # noqa: ANN001
    index, make = stored
    run = RunBuilder()
    submit = run.submit({**ANSWER, "quote": "Recommended supply 3.3 V nominal", "values": [{"typical": 3.3,
                                                                                          "unit": "V"}]})
    extraction_id = make(run, {**ANSWER, "quote": "Recommended supply 3.3 V nominal",
                               "values": [{"typical": 3.3, "unit": "V"}]})
    first = _review(index, extraction_id)
    assert first == [("quote_not_found", "error"), ("tool_bypass", "error")]
    second = _review(index, extraction_id)
    assert second == first
    with session_scope() as session:
        assert session.scalar(select(func.count()).select_from(Flag)) == 2
        assert session.scalar(select(func.count()).select_from(Grounding)) == 1
        flag = session.scalar(select(Flag).where(Flag.rule == "tool_bypass"))
        assert submit in flag.evidence["span_ids"] and flag.rule_version == "1" and flag.message
        assert Severity(flag.severity).rank >= Severity.warning.rank
        submit_attribution = session.scalar(select(Attribution).where(Attribution.span_id == submit))
        assert (submit_attribution.category, submit_attribution.charged_to) == ("tool_selection", "reasoning")
        summary = attribution_summary(session, "j" * 32)
        assert summary["job"]["by_category"]["tool_selection"] == 1


def test_cross_check_disagreement_and_engine_error(stored) -> None:  # noqa: ANN001
    index, make = stored
    run = RunBuilder().navigate("search_text")
    run.submit()
    primary = make(run)
    reader = make(None, {"found": True, "values": [{"min": 1.8, "max": 5.5, "unit": "V"}]}, role="cross_check")
    assert ("disagrees_with_reader", "warning") in _review(index, primary, reader)

    with session_scope() as session:
        session.execute(Extraction.__table__.delete())
    failed = RunBuilder(outcome="budget_exhausted", trace_id="b" * 32).navigate("search_text", "search_text")
    extraction_id = make(failed, {"found": False}, error_code="budget_exhausted")
    assert _review(index, extraction_id) == [("budget_exhausted", "error")]
    with session_scope() as session:
        rows = list(session.scalars(select(Attribution).where(Attribution.category == "engine_error")))
        assert [r.span_id for r in rows] == [failed.root["span_id"]]


def test_missing_record_is_not_a_bypass(stored) -> None:  # noqa: ANN001
    index, make = stored
    extraction_id = make(None)
    assert _review(index, extraction_id) == []
