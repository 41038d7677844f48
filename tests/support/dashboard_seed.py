"""A flagged run written straight into the database, for the dashboard tests.

The run is built on a real shared datasheet: the quote is a line of its text layer and the grounding boxes are
that line's box, the way the grounding pass stores them. Seeding does not depend on the engines or the
detectors, so the dashboard can be tested on its own.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import pymupdf

from app.db import session_scope
from app.dispatch import semconv
from app.dispatch.models import SpanRecord
from app.documents import store
from app.review.models import Attribution, Flag, Grounding
from app.tables.jobs import Extraction, Job, JobParameter, JobStatus
from app.timeutil import utcnow
from tests.support.paths import datasheet

DATASHEET = "speaker_amplifier"
# A printed value with its unit ("4 V", "8 Ω", "0.2 %"), not the digits of a part number such as "LM386".
_VALUE = re.compile(r"(?<![A-Za-z\d.])(\d+(?:\.\d+)?)\s?(?:V|mV|mA|uA|µA|μA|W|mW|Hz|kHz|dB|°C|Ω|kΩ|%)(?![A-Za-z])")


@dataclass
class QuotableLine:
    page: int  # 1-based
    text: str
    box: list[float]
    number: float


@dataclass
class SeededRun:
    job_id: str
    parameter_id: int
    extraction_id: int
    trace_id: str
    page: int
    quote: str
    boxes: list[list[float]]
    spans: dict[str, str] = field(default_factory=dict)  # role in the run -> span id
    flag_rule: str = ""


def quotable_line(pdf: Path) -> QuotableLine:
    """The first text line printing a value with a unit, preferring a page after the cover."""
    with pymupdf.open(pdf) as document:
        order = list(range(1, document.page_count)) + [0]
        for number in order:
            page = document[number]
            for block in page.get_text("dict")["blocks"]:
                for line in block.get("lines", []):
                    text = " ".join("".join(s["text"] for s in line["spans"]).split())
                    found = _VALUE.search(text)
                    if found and len(text) >= 12:
                        return QuotableLine(number + 1, text, [round(c, 2) for c in line["bbox"]],
                                            float(found.group(1)))
    raise AssertionError(f"no quotable line in {pdf}")


def _span(trace_id: str, name: str, start_ns: int, ms: float, *, parent: str | None, job_id: str, parameter_id: int,
          attributes: dict, payload: dict | None = None, status: str = "OK") -> SpanRecord:
    return SpanRecord(
        trace_id=trace_id, span_id=uuid.uuid4().hex[:16], parent_span_id=parent, name=name, start_ns=start_ns,
        end_ns=start_ns + int(ms * 1e6), duration_ms=ms, status_code=status,
        attributes={semconv.DSX_JOB_ID: job_id, semconv.DSX_PARAMETER_ID: parameter_id, **attributes},
        payload=payload or {}, job_id=job_id, parameter_id=parameter_id,
    )


def seed_flagged_run(
    *,
    pdf_name: str = DATASHEET,
    parameter: str = "Supply voltage",
    rule: str = "verification_skipped",
    severity: str = "warning",
    quote_found: bool = True,
    model: str = "offline/datasheet-reader",
    created_at: datetime | None = None,
    tenant: str = "default",
) -> SeededRun:
    """One needs-review job with one answered parameter, its dispatch record, a flag and a grounding."""
    pdf = datasheet(pdf_name)
    line = quotable_line(pdf)
    data = pdf.read_bytes()
    created = created_at or utcnow()
    quote = line.text if quote_found else f"{parameter} is {line.number:g} under all conditions (datasheet Table 9)"
    trace_id = uuid.uuid4().hex
    with session_scope() as session, pymupdf.open(pdf) as document:
        blob = store.put(session, data, document.page_count)
        job = Job(id=uuid.uuid4().hex, tenant=tenant, status=JobStatus.needs_review.value, engine="agentic",
                  model=model, blob_sha256=blob.sha256, filename=pdf.name, request_hash=uuid.uuid4().hex * 2,
                  created_at=created, finished_at=created)
        job.parameters = [JobParameter(position=0, name=parameter, unit="V", status="done")]
        session.add(job)
        session.flush()
        parameter_id = job.parameters[0].id

        t0 = int(created.timestamp() * 1e9) - 4_000_000_000
        common = {"job_id": job.id, "parameter_id": parameter_id}
        root = _span(trace_id, semconv.SPAN_INVOKE_AGENT, t0, 3200, parent=None, **common,
                     attributes={semconv.GEN_AI_OPERATION: "invoke_agent", semconv.DSX_OUTCOME: "submitted",
                                 semconv.DSX_ROLE: "primary", semconv.DSX_ENGINE: "agentic"})
        request_json = f'{{"name": "{parameter}", "unit": "V", "conditions": [], "notes": null}}'
        chat1 = _span(trace_id, semconv.chat_span_name(model), t0 + 50_000_000, 900, parent=root.span_id, **common,
                      attributes={semconv.GEN_AI_OPERATION: "chat", semconv.GEN_AI_INPUT_TOKENS: 1200,
                                  semconv.GEN_AI_OUTPUT_TOKENS: 40, semconv.DSX_LLM_COST_USD: 0.0021,
                                  semconv.DSX_LLM_OUTCOME: "tool_call", semconv.DSX_LLM_TURN: 0},
                      payload={"input": {"messages": [
                          {"role": "user", "content": f"<parameter_request>{request_json}</parameter_request>"}]},
                          "output": {"tool_calls": [{"name": "build_datasheet", "arguments": {}}]}})
        tool = _span(trace_id, semconv.tool_span_name("build_datasheet"), t0 + 1_000_000_000, 350,
                     parent=root.span_id, **common,
                     attributes={semconv.GEN_AI_OPERATION: "execute_tool", semconv.GEN_AI_TOOL_NAME: "build_datasheet",
                                 semconv.DSX_TOOL_OUTCOME: "ok"},
                     payload={"input": {}, "output": {"tool": "build_datasheet", "status": "ok",
                                                      "untrusted_document_data": True,
                                                      "result": {"page_count": document.page_count,
                                                                 "toc": [{"title": "Electrical characteristics",
                                                                          "page_start": line.page}]}}})
        chat2 = _span(trace_id, semconv.chat_span_name(model), t0 + 1_400_000_000, 1500, parent=root.span_id,
                      **common,
                      attributes={semconv.GEN_AI_OPERATION: "chat", semconv.GEN_AI_INPUT_TOKENS: 2600,
                                  semconv.GEN_AI_OUTPUT_TOKENS: 90, semconv.DSX_LLM_COST_USD: 0.0043,
                                  semconv.DSX_LLM_OUTCOME: "tool_call", semconv.DSX_LLM_TURN: 1},
                      payload={"input": {"messages": ["…"]},
                               "output": {"tool_calls": [{"name": "submit_extraction",
                                                          "arguments": {"quote": quote}}]}})
        submit = _span(trace_id, semconv.tool_span_name(semconv.SUBMIT_TOOL), t0 + 3_000_000_000, 20,
                       parent=root.span_id, **common,
                       attributes={semconv.GEN_AI_OPERATION: "execute_tool",
                                   semconv.GEN_AI_TOOL_NAME: semconv.SUBMIT_TOOL, semconv.DSX_TOOL_OUTCOME: "ok"},
                       payload={"input": {"found": True, "quote": quote}, "output": {"status": "ok"}})
        session.add_all([root, chat1, tool, chat2, submit])

        extraction = Extraction(
            job_id=job.id, parameter_id=parameter_id, attempt=1, role="primary", model=model, engine="agentic",
            found=True, values=[{"min": None, "typical": line.number, "max": None, "unit": "V", "conditions": []}],
            source_page=line.page, quote=quote, confidence=0.82, trace_id=trace_id, root_span_id=root.span_id,
            cost_usd=0.0064, duration_ms=3200, created_at=created,
        )
        session.add(extraction)
        session.flush()
        session.add(Flag(job_id=job.id, parameter_id=parameter_id, extraction_id=extraction.id, rule=rule,
                         rule_version="1", severity=severity,
                         message="The run navigated the datasheet but never cross-checked the value with "
                                 "search_text or extract_table_markdown before submitting.",
                         evidence={"span_ids": [tool.span_id, submit.span_id], "navigation_calls": 1},
                         created_at=created))
        boxes = [line.box] if quote_found else []
        session.add(Grounding(extraction_id=extraction.id, value_index=0,
                              outcome="grounded" if quote_found else "quote_not_found",
                              method="exact" if quote_found else None, score=100.0 if quote_found else None,
                              page=line.page if quote_found else None, boxes=boxes,
                              detail={"reported_pages": [line.page]}))
        session.add(Attribution(extraction_id=extraction.id, span_id=chat2.span_id,
                                category="verification_skipped", charged_to="reasoning",
                                detail="submitted without a cross-check call"))
        return SeededRun(job_id=job.id, parameter_id=parameter_id, extraction_id=extraction.id, trace_id=trace_id,
                         page=line.page, quote=quote, boxes=boxes, flag_rule=rule,
                         spans={"root": root.span_id, "chat1": chat1.span_id, "tool": tool.span_id,
                                "chat2": chat2.span_id, "submit": submit.span_id})


# --- The seeded run is a real queue item ----------------------------------------------------------------
