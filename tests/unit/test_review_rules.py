"""Detector rules on dispatch records built span by span in the shape the agent writes."""

from __future__ import annotations

from typing import Any

import pytest

from app.detectors.config import RuleSettings
from app.detectors.record import Submission
from app.detectors.rules import RULES, Context, evaluate
from app.detectors.severity import Severity
from app.dispatch import semconv as sc
from evaluation.traces import record_from_cell
from tests.support.runs import ANSWER, RunBuilder


def verdicts(record, **kwargs: Any) -> dict[str, Any]:  # noqa: ANN001
    ctx = Context(record=record, submission=kwargs.pop("submission", record.submission if record else None),
                  **kwargs)
    return {v.rule: v for v in evaluate(ctx)}


def flagged(record, **kwargs: Any) -> set[str]:  # noqa: ANN001
    return {name for name, v in verdicts(record, **kwargs).items() if v.findings}


def test_clean_agentic_run_raises_no_dispatch_flag() -> None:
    run = RunBuilder().navigate("build_datasheet", "search_text", "extract_table_markdown")
    run.submit()
    assert flagged(run.record()) == set()


def test_tool_bypass_names_the_spans_of_the_run() -> None:
    run = RunBuilder()
    submit = run.submit()
    record = run.record()
    result = verdicts(record)["tool_bypass"]
    (finding,) = result.findings
    assert finding.severity is Severity.error and finding.version == "1"
    assert submit in finding.evidence["span_ids"]
    assert "navigation" in finding.message
    assert "verification_skipped" not in flagged(record)


def test_tool_bypass_does_not_apply_to_single_pass() -> None:
    run = RunBuilder(engine="single-pass")
    run.submit()
    result = verdicts(run.record())["tool_bypass"]
    assert not result.evaluable and not result.findings


def test_verification_skipped() -> None:
    run = RunBuilder().navigate("build_datasheet", "get_section_text")
    run.submit()
    result = verdicts(run.record())["verification_skipped"]
    assert result.findings and len(result.findings[0].evidence["span_ids"]) == 2
    assert result.findings[0].severity is Severity.warning


def test_tool_read_failure_only_when_not_recovered() -> None:
    failed = RunBuilder().navigate("build_datasheet")
    failed.turn()
    bad = failed.tool("search_text", outcome="empty")
    failed.submit()
    result = verdicts(failed.record())["tool_read_failure"]
    assert result.findings and bad in result.findings[0].evidence["span_ids"]

    recovered = RunBuilder().navigate("build_datasheet")
    recovered.turn()
    recovered.tool("search_text", outcome="empty")
    recovered.navigate("search_text")
    recovered.submit()
    assert "tool_read_failure" not in flagged(recovered.record())

    errored = RunBuilder()
    errored.turn()
    errored.tool("extract_table_markdown", outcome="error", error_code="tool_failed")
    errored.submit()
    finding = verdicts(errored.record())["tool_read_failure"].findings[0]
    assert finding.evidence["failed_calls"] == [{"tool": "extract_table_markdown", "outcome": "error",
                                                 "error_code": "tool_failed"}]


def test_no_tool_call_http_200() -> None:
    run = RunBuilder()
    silent = run.turn(tool_calls=0)
    run.navigate("search_text")
    run.submit()
    finding = verdicts(run.record())["no_tool_call_http_200"].findings[0]
    assert finding.evidence["span_ids"] == [silent]
    # A turn that was allowed to answer in text is not a silent failure, and neither is a provider error.
    ok = RunBuilder()
    ok.turn(tool_calls=0, required=False)
    ok.turn(tool_calls=0, status=500)
    ok.navigate("search_text")
    ok.submit()
    assert "no_tool_call_http_200" not in flagged(ok.record())


def test_reasoning_dropped() -> None:
    dropped = RunBuilder(reasoning_expected=True).navigate("search_text")
    dropped.submit()
    assert "reasoning_dropped" in flagged(dropped.record())
    kept = RunBuilder(reasoning_expected=True)
    kept.turn(reasoning=True)
    kept.tool("search_text")
    kept.submit()
    assert "reasoning_dropped" not in flagged(kept.record())
    unknown = RunBuilder().navigate("search_text")
    unknown.submit()
    assert not verdicts(unknown.record())["reasoning_dropped"].evaluable


@pytest.mark.parametrize(("outcome", "rule"), [("budget_exhausted", "budget_exhausted"),
                                               ("provider_error", "engine_error"),
                                               ("submit_not_called", "engine_error")])
def test_engine_outcomes(outcome: str, rule: str) -> None:
    run = RunBuilder(outcome=outcome)
    run.turn(tool_calls=1)
    run.tool("search_text")
    record = run.record()
    result = flagged(record, submission=None, error_code=outcome)
    assert result == {rule}
    finding = verdicts(record, submission=None, error_code=outcome)[rule].findings[0]
    assert finding.evidence["span_ids"][0] == record.root_span_id


def test_count_only_cell_evaluates_what_counts_can_tell() -> None:
    cell = record_from_cell({"claim_id": "x", "n_tool_calls_by_tool": {"submit_extraction": 1}, "found": True,
                             "confidence": 0.8, "page_numbers": [4],
                             "values": [{"min": 2.7, "typ": None, "max": 5.5, "unit": "V", "conditions": [],
                                         "source_text": "Supply Voltage VDD 2.7 — 5.5 V"}]})
    result = verdicts(cell)
    assert result["tool_bypass"].findings
    for rule in ("tool_read_failure", "no_tool_call_http_200", "reasoning_dropped", "engine_error",
                 "budget_exhausted"):
        assert not result[rule].evaluable, rule
        assert "counts only" in result[rule].reason
    navigated = record_from_cell({"claim_id": "y", "n_tool_calls_by_tool": {"get_section_text": 2,
                                                                            "submit_extraction": 1},
                                  "found": True, "values": [{"max": 5.5, "unit": "V"}]})
    assert flagged(navigated) == {"verification_skipped"}


def test_no_record_means_not_evaluable_not_flagged() -> None:
    result = verdicts(None, submission=Submission.from_mapping(ANSWER))
    assert not any(v.findings for v in result.values())
    assert not result["tool_bypass"].evaluable


def test_settings_disable_and_change_severity() -> None:
    run = RunBuilder()
    run.submit()
    settings = RuleSettings.from_mapping({"tool_bypass": {"severity": "info"},
                                          "verification_skipped": {"enabled": False}})
    result = verdicts(run.record(), settings=settings)
    assert result["tool_bypass"].findings[0].severity is Severity.info
    assert result["verification_skipped"].reason == "disabled by configuration"


def test_settings_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from app.config import reset_settings
    from app.detectors.config import rule_settings

    monkeypatch.setenv("DSX_REVIEW_RULES", '{"reasoning_dropped": {"enabled": false}}')
    reset_settings()
    try:
        assert not rule_settings().enabled("reasoning_dropped")
        assert rule_settings().enabled("tool_bypass")
    finally:
        monkeypatch.delenv("DSX_REVIEW_RULES")
        reset_settings()


def test_every_rule_is_versioned_and_named_once() -> None:
    names = [r.name for r in RULES]
    assert len(names) == len(set(names))
    assert all(r.version and r.summary for r in RULES)


def test_plausibility_rules() -> None:
    bad = {"found": True, "values": [{"min": 5.5, "max": 2.7, "unit": "mA"}, {"typical": 99999, "unit": "V"}],
           "quote": "x", "source_page": 1}
    run = RunBuilder().navigate("search_text")
    run.submit(bad)
    result = flagged(run.record(), request={"unit": "V"})
    assert {"value_ordering", "unit_dimension", "sentinel_value"} <= result


def test_disagrees_with_reader_after_unit_normalisation() -> None:
    run = RunBuilder().navigate("search_text")
    run.submit({**ANSWER, "values": [{"typical": 2.5, "unit": "uA"}]})
    same = Submission.from_mapping({"found": True, "values": [{"typical": 0.0025, "unit": "mA"}]})
    other = Submission.from_mapping({"found": True, "values": [{"typical": 450, "unit": "µA"}]})
    assert "disagrees_with_reader" not in flagged(run.record(), cross_check=same)
    finding = verdicts(run.record(), cross_check=other)["disagrees_with_reader"].findings[0]
    assert finding.evidence["kind"] == "value_mismatch" and "450" in finding.message
    not_found = Submission.from_mapping({"found": False, "reason": "not in the datasheet"})
    assert "disagrees_with_reader" not in flagged(run.record(), cross_check=not_found)
    assert not verdicts(run.record(), cross_check=None)["disagrees_with_reader"].evaluable


def test_refused_calls_are_not_navigation() -> None:
    run = RunBuilder()
    run.turn()
    run.tool("search_text", outcome="error", error_code="tool_not_available")
    run.submit()
    assert "tool_bypass" in flagged(run.record())
    withheld = RunBuilder().navigate("get_section_text")
    withheld.turn()
    withheld.tool("extract_table_markdown", outcome="error", error_code="tool_not_available")
    withheld.submit()
    assert flagged(withheld.record()) == {"verification_skipped"}


def test_tool_content_mismatch(dsx_env, tmp_path) -> None:  # noqa: ANN001
    from app.documents.cache import open_index as index_of
    from tests.support.pdfs import text_pdf

    intended = tmp_path / "intended.pdf"
    text_pdf(["Supply Voltage VDD 2.7 - 5.5 V\nWiper resistance RW 75 160 Ohm\nOperating temperature -40 to 125 C\n"
              "Serial clock frequency 10 MHz max\nStandby current 2.5 uA typical"], path=intended)
    decoy = tmp_path / "decoy.pdf"
    text_pdf(["Fan speed 3000 rpm nominal\nAirflow 109.9 m3/h at full speed\nNoise level 43.5 dB(A)\n"
              "Rated voltage 12 V DC supply\nBearing type SSO2 hydrodynamic"], path=decoy)
    document = index_of(intended)

    def run_with(text: str) -> Any:
        run = RunBuilder()
        run.turn()
        run.tool("get_section_text", output={"text": text})
        run.turn()
        run.tool("search_text", output={"hits": [{"text": line} for line in text.splitlines()]})
        run.submit()
        return verdicts(run.record(), document=document)["tool_content_mismatch"]

    clean = run_with(document.page(1).text)
    assert clean.evaluable and not clean.findings
    foreign = run_with(index_of(decoy).page(1).text)
    (finding,) = foreign.findings
    assert finding.severity is Severity.error and len(finding.evidence["span_ids"]) == 2
    assert finding.evidence["share"] < 0.8
    assert not verdicts(RunBuilder().record(), document=document)["tool_content_mismatch"].evaluable


def _answered_by(run: RunBuilder, **attributes: Any) -> None:
    for span in run.spans:
        if span["name"].startswith("chat "):
            span["attributes"].update({sc.GEN_AI_REQUEST_MODEL: "openai/gpt-4o", **attributes})


@pytest.mark.parametrize(("attributes", "expected"), [
    ({sc.GEN_AI_RESPONSE_MODEL: "gpt-4o-2024-08-06"}, False),  # a dated snapshot of the requested model
    ({sc.GEN_AI_RESPONSE_MODEL: "gpt-4o-mini"}, False),  # prefix-compatible names are not told apart by name
    ({sc.GEN_AI_RESPONSE_MODEL: "claude-sonnet-4"}, True),
    ({sc.DSX_GATEWAY_ATTEMPTED_FALLBACKS: 1, sc.GEN_AI_RESPONSE_MODEL: "gpt-4o"}, True),
    ({sc.DSX_GATEWAY_ATTEMPTED_FALLBACKS: 0, sc.DSX_GATEWAY_MODEL_GROUP: "openai/gpt-4o"}, False),
    ({sc.DSX_GATEWAY_ATTEMPTED_FALLBACKS: 0, sc.DSX_GATEWAY_MODEL_GROUP: "cheap-group"}, True),
])
def test_model_fallback_compares_the_answering_model_with_the_requested_one(attributes: dict, expected: bool) -> None:
    run = RunBuilder().navigate("build_datasheet", "search_text")
    run.submit()
    _answered_by(run, **attributes)
    assert ("model_fallback" in flagged(run.record())) is expected


def test_model_fallback_is_not_evaluable_without_a_response_model() -> None:
    run = RunBuilder().navigate("search_text")
    run.submit()
    verdict = verdicts(run.record())["model_fallback"]
    assert not verdict.evaluable and "which model answered" in verdict.reason


def test_rule_set_version_changes_with_the_overrides_in_force() -> None:
    from app.detectors.audit import rule_set_version

    default = rule_set_version(RuleSettings())
    assert default == rule_set_version(RuleSettings()) and len(default) == 12
    assert rule_set_version(RuleSettings.from_mapping({"model_fallback": {"enabled": False}})) != default


def test_rule_set_version_covers_the_rules_of_every_detector_module(monkeypatch: pytest.MonkeyPatch) -> None:
    import dataclasses

    from app.detectors import audit
    from app.detectors.structural import STRUCTURAL_RULES

    assert {r.name for r in STRUCTURAL_RULES} <= {r.name for r in audit.ALL_RULES}
    default = audit.rule_set_version(RuleSettings())
    bumped = tuple(dataclasses.replace(r, version=r.version + "-next") if r in STRUCTURAL_RULES else r
                   for r in audit.ALL_RULES)
    monkeypatch.setattr(audit, "ALL_RULES", bumped)
    assert audit.rule_set_version(RuleSettings()) != default
