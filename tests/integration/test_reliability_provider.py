"""Provider faults at the job level: rate limits, server errors, hangs and malformed tool arguments are retried
or end one parameter with a typed engine error; the job itself always finishes, with the other parameters
answered. (The loop's own handling of each fault is covered call by call in tests/unit/test_agent_loop.py.)"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from app.config import reset_settings
from tests.support import jobs
from tests.support.pdfs import text_pdf
from tests.support.scripted_llm import (
    Behaviour,
    ScriptedLLM,
    error,
    hang,
    malformed_tool_call,
    scripted_llm,  # noqa: F401
    submit,
    tool_call,
)

pytestmark = pytest.mark.integration

ROWS = {
    "Supply voltage": ("Supply voltage VDD 2.7 5.5 V", {"min": 2.7, "max": 5.5, "unit": "V"}),
    "Quiescent current": ("Quiescent current IQ 85 120 uA", {"typical": 85, "max": 120, "unit": "uA"}),
    "Output current": ("Output current IOUT 20 mA", {"max": 20, "unit": "mA"}),
    "Slew rate": ("Slew rate SR 0.6 V/us", {"typical": 0.6, "unit": "V/us"}),
    "Input offset voltage": ("Input offset voltage VOS 0.5 3 mV", {"typical": 0.5, "max": 3, "unit": "mV"}),
}
_REQUEST = re.compile(r"<parameter_request>(.*?)</parameter_request>", re.S)


def parameter_of(body: dict[str, Any]) -> str:
    user = next(m["content"] for m in body["messages"] if m["role"] == "user")
    return json.loads(_REQUEST.search(user).group(1))["name"]


class FaultyProvider:
    """Per parameter, a fault on the first call(s), then the diligent search-and-submit."""

    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()
        self.faults = {
            "Supply voltage": [error(429, "slow down", headers={"Retry-After": "0"})],  # retried, then fine
            "Quiescent current": [error(503), error(502), error(500)],  # beyond the retries: provider_error
            "Output current": [malformed_tool_call("search_text")],  # a tool error the model recovers from
            "Slew rate": [hang(3.0)] * 3,  # past the call timeout on every attempt: timeout
        }

    def __call__(self, body: dict[str, Any]) -> Behaviour:
        name = parameter_of(body)
        self.calls[name] += 1
        planned = self.faults.get(name, [])
        if self.calls[name] <= len(planned):
            return planned[self.calls[name] - 1]
        if not any(m["role"] == "tool" and '"search_text"' in m["content"] and '"ok"' in m["content"]
                   for m in body["messages"]):
            return tool_call("search_text", {"query": name})
        quote, value = ROWS[name]
        return submit({"found": True, "values": [value], "source_page": 1, "quote": quote, "confidence": 0.9})


def test_provider_faults_end_in_retries_or_typed_errors_and_the_job_finishes(
        dsx_env, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, scripted_llm: ScriptedLLM) -> None:  # noqa: ANN001, F811
    jobs.use_scripted_model(monkeypatch, scripted_llm, tmp_path)
    monkeypatch.setenv("DSX_LLM_MAX_RETRIES", "2")
    monkeypatch.setenv("DSX_CALL_TIMEOUT_S", "1")
    reset_settings()
    provider = FaultyProvider()
    scripted_llm.always(provider)
    pdf = text_pdf(["Electrical characteristics\n" + "\n".join(quote for quote, _ in ROWS.values())])
    job = jobs.run(jobs.create(pdf, list(ROWS)))

    assert job["status"] == "needs_review", job
    results = {r["parameter"]: r for r in job["results"]}
    assert all(r["status"] == "done" for r in results.values())

    for name in ("Supply voltage", "Output current", "Input offset voltage"):
        answer = results[name]
        assert answer["error_code"] is None and answer["found"], (name, answer)
        assert answer["values"][0]["unit"] == ROWS[name][1]["unit"]
    assert provider.calls["Supply voltage"] == 3  # the 429, its retry (search), the submit

    quiescent = results["Quiescent current"]
    assert quiescent["error_code"] == "provider_error" and not quiescent["found"]
    assert jobs.flags(quiescent)["engine_error"]["severity"] == "error"
    assert provider.calls["Quiescent current"] == 3  # first try + two retries, then it stops

    slew = results["Slew rate"]
    assert slew["error_code"] == "timeout"
    assert "engine_error" in jobs.flags(slew)
    assert provider.calls["Slew rate"] == 3  # each attempt timed out; none was answered late
