"""The failure-attribution rubric, call by call, and its summaries."""

from __future__ import annotations

from app.detectors.attribution import attribute, condition_reflected, summarize
from app.detectors.grounding import GroundingResult, Outcome
from app.detectors.record import Submission
from tests.support.runs import ANSWER, RunBuilder


def _by_span(rows) -> dict:  # noqa: ANN001
    return {r.span_id: (r.category, r.charged_to) for r in rows}


def test_tool_errors_are_charged_to_the_tool_or_to_reasoning_by_cause() -> None:
    run = RunBuilder()
    run.turn()
    broken = run.tool("extract_table_markdown", outcome="error", error_code="tool_failed")
    run.turn()
    empty = run.tool("search_text", outcome="empty")
    run.turn()
    misuse = run.tool("get_section_text", outcome="error", error_code="page_out_of_range")
    run.navigate("search_text")
    submit = run.submit()
    rows = _by_span(attribute(run.record()))
    assert rows[broken] == ("tool_output_error", "tool")
    assert rows[empty] == ("tool_output_error", "tool")
    assert rows[misuse] == ("tool_selection", "reasoning")
    assert rows[submit] == ("ok", "none")


def test_submit_categories() -> None:
    bypass = RunBuilder()
    submit = bypass.submit()
    assert _by_span(attribute(bypass.record()))[submit] == ("tool_selection", "reasoning")

    unverified = RunBuilder().navigate("get_section_text")
    submit = unverified.submit()
    assert _by_span(attribute(unverified.record()))[submit] == ("verification_skipped", "reasoning")

    omitted = RunBuilder().navigate("search_text")
    submit = omitted.submit()
    rows = attribute(omitted.record(), request={"conditions": ["VDD = 5.5V"]})
    assert _by_span(rows)[submit] == ("condition_omission", "reasoning")
    kept = attribute(omitted.record(), request={"conditions": ["VDD = 5.5V"]},
                     submission=Submission.from_mapping({**ANSWER, "values": [
                         {"min": 2.7, "max": 5.5, "unit": "V", "conditions": ["VDD=5.5 V"]}]}))
    assert _by_span(kept)[submit] == ("ok", "none")

    decoy = RunBuilder().navigate("search_text")
    submit = decoy.submit()
    failed = [GroundingResult(0, Outcome.quote_not_found)]
    assert _by_span(attribute(decoy.record(), groundings=failed))[submit] == ("unclassified", "unknown")


def test_model_turn_failures_are_engine_errors() -> None:
    run = RunBuilder(outcome="provider_error")
    error = run.turn(status=503)
    silent = run.turn(tool_calls=0)
    rows = attribute(run.record())
    assert _by_span(rows)[error] == ("engine_error", "engine")
    assert _by_span(rows)[silent] == ("engine_error", "engine")
    assert rows[-1].span_id == run.root["span_id"] and rows[-1].category == "engine_error"


def test_summary() -> None:
    run = RunBuilder()
    run.turn()
    run.tool("search_text", outcome="error", error_code="tool_failed")
    run.turn()
    run.tool("search_text", outcome="error", error_code="tool_failed")
    run.submit()
    summary = summarize(attribute(run.record()))
    assert summary["by_category"] == {"ok": 4, "tool_output_error": 2}
    assert summary["charged_to"] == {"none": 4, "tool": 2}
    assert summary["primary_cause"] == "tool_output_error"
    assert summarize([])["primary_cause"] == "ok"


def test_condition_matching_is_lenient_on_spacing_and_glyphs() -> None:
    assert condition_reflected("Tmin ≤ Tamb ≤ Tmax", "Tmin <= Tamb <= Tmax, VCC+ = 5 V")
    assert condition_reflected("RL = 2 kΩ", "", quote="VCC+ = 30 V, RL=2kW, CL = 100 pF")
    assert condition_reflected("VDD = 5.5V", "5.5 V supply, VDD")
    assert not condition_reflected("VDD = 2.7V", "VDD = 5.5V")
    assert not condition_reflected("VDD = 5.5V", "", quote="Supply Voltage VDD 2.7 - 5.5 V")
