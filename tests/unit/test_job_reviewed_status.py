"""A job's status follows the evidence: flagged answers send it to review, and once a reviewer has decided every
flagged answer the job reports ``reviewed`` (end to end through the HTTP API)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.flows import extraction as pipeline
from tests.support import jobs
from tests.support.pdfs import text_pdf
from tests.support.scripted_llm import ScriptedLLM, scripted_llm, submit, tool_call  # noqa: F401

PAGE = "Electrical characteristics\nStandby current ISB 4.5 uA\nSupply voltage VDD 1.8 3.6 V\nGain 20 dB"


@pytest.fixture
def api(dsx_env, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,  # noqa: ANN001
        scripted_llm: ScriptedLLM) -> Iterator[tuple[TestClient, ScriptedLLM]]:  # noqa: F811
    jobs.use_scripted_model(monkeypatch, scripted_llm, tmp_path)
    from app.main import create_app

    with TestClient(create_app()) as client:
        yield client, scripted_llm


def answer(value: dict, quote: str) -> list:
    return [tool_call("get_section_text", {"start_page": 1, "end_page": 1}),
            tool_call("search_text", {"query": quote.split()[0]}),
            submit({"found": True, "values": [value], "source_page": 1, "quote": quote, "confidence": 0.9})]


def test_flagged_job_is_reviewed_once_every_flagged_answer_has_a_decision(
        api: tuple[TestClient, ScriptedLLM]) -> None:
    client, llm = api
    llm.script(
        # A current answered in volts (the quote's number, the wrong dimension): flagged.
        *answer({"typical": 4.5, "unit": "V"}, "Standby current ISB 4.5 uA"),
        # A voltage with its unit dropped: flagged.
        *answer({"min": 1.8, "max": 3.6}, "Supply voltage VDD 1.8 3.6 V"),
        # A clean answer: not flagged, and no decision is needed for it.
        *answer({"typical": 20, "unit": "dB"}, "Gain 20 dB"),
    )
    response = client.post("/v1/jobs", files={"file": ("part.pdf", text_pdf([PAGE]), "application/pdf")},
                           data={"parameters": json.dumps(["Standby current", "Supply voltage", "Gain"]),
                                 "engine": "agentic"})
    assert response.status_code == 202, response.text
    job_id = response.json()["job_id"]
    pipeline.run(job_id)

    job = client.get(f"/v1/jobs/{job_id}").json()
    assert job["status"] == "needs_review"
    rules = [{f["rule"] for f in r["flags"] if f["severity"] != "info"} for r in job["results"]]
    assert "expected_dimension" in rules[0] and "expected_dimension" in rules[1] and not rules[2], rules
    first, second = (r["extraction_id"] for r in job["results"][:2])

    assert client.post(f"/v1/review/items/{first}/decision", json={"decision": "reject"}).status_code == 201
    assert client.get(f"/v1/jobs/{job_id}").json()["status"] == "needs_review"  # one flagged answer left
    assert client.post(f"/v1/review/items/{second}/decision", json={"decision": "approve"}).status_code == 201
    reviewed = client.get(f"/v1/jobs/{job_id}").json()
    assert reviewed["status"] == "reviewed"
    assert [r["review"]["decision"] if r["review"] else None for r in reviewed["results"]] == \
        ["reject", "approve", None]
    assert reviewed["finished_at"] == job["finished_at"]  # the run ended once; review does not re-finish it
    listed = client.get("/v1/jobs", params={"status": "reviewed"}).json()
    assert [j["job_id"] for j in listed["items"]] == [job_id]
