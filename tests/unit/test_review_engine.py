"""The detectors on dispatch records written by the real agent loop (LiteLLM against a scripted server)."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import select

from app.agent import engines
from app.agent.schemas import ParameterRequest, RunContext
from app.db import session_scope
from app.dispatch import telemetry
from app.documents import store
from app.documents.cache import open_index
from app.flows import extraction as extraction_flow
from app.flows.review import review_extraction
from app.jobs.service import create_job
from app.review.models import Attribution, Flag, Grounding
from app.tables.jobs import Job, JobParameter
from tests.support.pdfs import text_pdf
from tests.support.scripted_llm import ScriptedLLM, submit, text, tool_call

ANSWER = {"found": True, "values": [{"min": 2.7, "max": 5.5, "unit": "V"}], "source_page": 2,
          "quote": "Supply Voltage VDD 2.7 - 5.5 V", "confidence": 0.9}


@pytest.fixture
def llm():  # noqa: ANN201
    with ScriptedLLM() as server:
        yield server


@pytest.fixture
def sheet(dsx_env, tmp_path: Path):  # noqa: ANN001, ANN201
    telemetry.reset()
    pdf = tmp_path / "sheet.pdf"
    text_pdf(["Overview\nA digital potentiometer", "DC Characteristics\nSupply Voltage VDD 2.7 - 5.5 V\n"
              "Supply Current IDD 450 uA max"], path=pdf)
    yield pdf
    telemetry.reset()


def _run_and_review(pdf: Path, model) -> tuple[list[tuple[str, str]], list[str], str]:  # noqa: ANN001
    index = open_index(pdf)
    with session_scope() as session:
        job, _ = create_job(session, data=pdf.read_bytes(), filename="sheet.pdf",
                            parameters=[{"name": "Supply voltage", "unit": "V"}], model="offline/datasheet-reader")
        job_id, parameter_id = job.id, job.parameters[0].id
    assert store.blob_path(index.sha256).exists()
    outcome = engines.run_parameter(index=index, request=ParameterRequest(name="Supply voltage", unit="V"),
                                    model=model, engine="agentic",
                                    context=RunContext(job_id=job_id, parameter_id=parameter_id))
    telemetry.flush()
    with session_scope() as session:
        extraction = extraction_flow.store_outcome(session, job_id, parameter_id, outcome, role="primary")
        review_extraction(session, job=session.get(Job, job_id), parameter=session.get(JobParameter, parameter_id),
                          extraction=extraction, index=index)
        flags = sorted((f.rule, f.severity) for f in session.scalars(select(Flag)))
        outcomes = [g.outcome for g in session.scalars(select(Grounding))]
        evidence = session.scalar(select(Flag).where(Flag.rule == "tool_bypass"))
        submit_span = evidence.evidence["span_ids"][-1] if evidence else ""
        if evidence:
            attribution = session.scalar(select(Attribution).where(Attribution.span_id == submit_span))
            assert attribution is not None and attribution.category == "tool_selection"
    return flags, outcomes, submit_span


def test_answer_without_opening_the_datasheet(sheet: Path, llm: ScriptedLLM) -> None:
    llm.script(submit(ANSWER))
    flags, outcomes, submit_span = _run_and_review(sheet, llm.model_config())
    # The quote is real (the model "knew" it), so only the dispatch record shows what happened.
    assert flags == [("tool_bypass", "error")]
    assert outcomes == ["grounded"]
    assert submit_span


def test_careful_run_is_clean(sheet: Path, llm: ScriptedLLM) -> None:
    llm.script(tool_call("build_datasheet", {}), tool_call("search_text", {"query": "supply voltage"}),
               submit(ANSWER))
    flags, outcomes, _ = _run_and_review(sheet, llm.model_config())
    assert flags == []
    assert outcomes == ["grounded"]


def test_text_reply_where_a_tool_call_was_required(sheet: Path, llm: ScriptedLLM) -> None:
    llm.script(text("The supply voltage is 2.7 V to 5.5 V."), tool_call("search_text", {"query": "supply voltage"}),
               submit(ANSWER))
    flags, _, _ = _run_and_review(sheet, llm.model_config())
    assert flags == [("no_tool_call_http_200", "warning")]


def test_reasoning_dropped_by_the_provider(sheet: Path, llm: ScriptedLLM) -> None:
    llm.script(tool_call("search_text", {"query": "supply voltage"}), submit(ANSWER))
    flags, _, _ = _run_and_review(sheet, llm.model_config(reasoning=True))
    assert flags == [("reasoning_dropped", "warning")]


def test_fabricated_quote(sheet: Path, llm: ScriptedLLM) -> None:
    llm.script(tool_call("search_text", {"query": "supply voltage"}),
               submit({**ANSWER, "quote": "Operating supply 3.0 V to 3.6 V", "values": [{"min": 3.0, "max": 3.6,
                                                                                       "unit": "V"}]}))
    flags, outcomes, _ = _run_and_review(sheet, llm.model_config())
    assert flags == [("quote_not_found", "error")]
    assert outcomes == ["quote_not_found"]
