"""The three trace formats become one run record; `dsx detect` audits them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from app.cli import cli
from evaluation.traces import TraceFormatError, detect_format, load_records
from tests.support.runs import ANSWER, RunBuilder

SUBMIT_ARGS = json.dumps({"found": True, "values": [{"min": 3, "max": 30, "unit": "V"}], "source_page": 5,
                          "quote": "VCC Supply voltage 3 to 30 V", "confidence": 0.9})


def _steps(claim: str, steps: list[dict], engine: str = "agentic") -> list[dict]:
    out = []
    for n, step in enumerate(steps):
        out.append({"claim_id": claim, "engine": engine, "phase": "extraction", "step": n, "turn_idx": n,
                    "tool_name": None, "tool_input_summary": None, "tool_output_summary": None, "error": None,
                    "agent_reasoning": "", "latency_ms": 10, "input_tokens": 100, "output_tokens": 20, **step})
    return out


def _write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


@pytest.fixture
def reference_trace(tmp_path: Path) -> Path:
    rows = [{"kind": "session_start", "model": "vendor/model", "reasoning_effort": "high"}]
    rows += _steps("clean", [
        {"kind": "tool_call", "tool_name": "build_datasheet", "tool_output_summary": '{"title": "LM358"}',
         "agent_reasoning": "open it"},
        {"kind": "tool_call", "tool_name": "search_text", "tool_input_summary": '{"query": "supply voltage"}',
         "tool_output_summary": '{"hits": [{"page": 5, "text": "VCC Supply voltage 3 to 30 V"}]}',
         "agent_reasoning": "search"},
        {"kind": "tool_call", "tool_name": "submit_extraction", "tool_input_summary": SUBMIT_ARGS,
         "tool_output_summary": "accepted", "agent_reasoning": "answer"},
    ])
    rows += _steps("bypass", [
        {"kind": "final_output", "final_output": SUBMIT_ARGS},
    ])
    rows += _steps("failed-read", [
        {"kind": "tool_call", "tool_name": "get_section_text", "error": "timeout", "agent_reasoning": "read"},
        {"kind": "tool_call", "tool_name": "submit_extraction", "tool_input_summary": SUBMIT_ARGS,
         "agent_reasoning": "answer anyway"},
    ])
    return _write_jsonl(tmp_path / "steps.jsonl", rows)


def test_reference_steps_become_records(reference_trace: Path) -> None:
    fmt, records = load_records(reference_trace)
    assert fmt == "reference"
    by_claim = {r.key: r for r in records}
    clean = by_claim["clean"]
    assert clean.engine == "agentic" and clean.reasoning_expected is True
    assert clean.counts_before_answer() == {"build_datasheet": 1, "search_text": 1, "submit_extraction": 1}
    assert clean.submission is not None and clean.submission.values[0]["max"] == 30
    assert clean.submit_call is not None and clean.submit_call.span_id == "step:2"
    assert by_claim["bypass"].submission is not None and not by_claim["bypass"].tool_calls
    failed = by_claim["failed-read"]
    assert failed.tool_calls[0].outcome == "error"


def test_detect_reference_trace(reference_trace: Path) -> None:
    result = CliRunner().invoke(cli, ["detect", "--trace", str(reference_trace)])
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert out["format"] == "reference"
    flags = {(f["claim_id"], f["rule"]) for f in out["flags"]}
    assert ("bypass", "tool_bypass") in flags and ("bypass", "no_tool_call_http_200") in flags
    assert ("failed-read", "tool_read_failure") in flags and ("failed-read", "verification_skipped") in flags
    assert ("failed-read", "reasoning_dropped") not in flags
    assert not {rule for claim, rule in flags if claim == "clean"}
    for flag in out["flags"]:
        assert set(flag) >= {"rule", "severity", "message", "evidence"} and "span_ids" in flag["evidence"]
    grounding = [v for v in out["evaluable"] if v["rule"] == "quote_not_found"]
    assert grounding and not any(v["evaluable"] for v in grounding)  # no datasheet given


def test_dsx_span_jsonl(tmp_path: Path) -> None:
    run = RunBuilder().navigate("build_datasheet", "get_section_text")
    run.submit(ANSWER)
    trace = _write_jsonl(tmp_path / "spans.jsonl", run.spans)
    fmt, records = load_records(trace)
    assert fmt == "dsx" and len(records) == 1 and records[0].submission.quote == ANSWER["quote"]
    result = CliRunner().invoke(cli, ["detect", "--trace", str(trace), "--format", "dsx"])
    assert result.exit_code == 0, result.output
    assert [f["rule"] for f in json.loads(result.output)["flags"]] == ["verification_skipped"]


def test_cell_format_one_object_per_file_or_jsonl(tmp_path: Path) -> None:
    cell = {"claim_id": "c1", "n_tool_calls_by_tool": {"search_text": 2, "submit_extraction": 1}, "found": True,
            "confidence": 0.7, "page_numbers": [5],
            "values": [{"min": 3, "typ": None, "max": 30, "unit": "V", "conditions": [],
                        "source_text": "VCC Supply voltage 3 to 30 V"}]}
    single = tmp_path / "cell.json"
    single.write_text(json.dumps(cell, indent=2))
    fmt, records = load_records(single)
    assert fmt == "cell" and records[0].submission.values[0]["quote"] == "VCC Supply voltage 3 to 30 V"
    lines = _write_jsonl(tmp_path / "cells.jsonl", [cell, {**cell, "claim_id": "c2", "n_tool_calls_by_tool": {}}])
    result = CliRunner().invoke(cli, ["detect", "--trace", str(lines)])
    out = json.loads(result.output)
    assert {(f["claim_id"], f["rule"]) for f in out["flags"]} == {("c2", "tool_bypass")}
    not_evaluable = {v["rule"] for v in out["evaluable"] if v["claim_id"] == "c1" and not v["evaluable"]}
    assert {"tool_read_failure", "no_tool_call_http_200", "engine_error"} <= not_evaluable


def test_detect_format_and_errors(tmp_path: Path) -> None:
    assert detect_format([{"claim_id": "x", "n_tool_calls_by_tool": {}}]) == "cell"
    with pytest.raises(TraceFormatError):
        detect_format([{"hello": "world"}])
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"a": 1}\nnot json\n')
    result = CliRunner().invoke(cli, ["detect", "--trace", str(bad)])
    assert result.exit_code != 0
    missing = CliRunner().invoke(cli, ["detect", "--trace", str(tmp_path / "nope.jsonl")])
    assert missing.exit_code != 0 and "no such trace file" in missing.output


def test_detect_grounds_against_the_datasheet(dsx_env, tmp_path: Path, datasheets_dir: Path) -> None:  # noqa: ANN001
    pdf = datasheets_dir / "microphone_amplifier.pdf"
    good = {"claim_id": "good", "n_tool_calls_by_tool": {"search_text": 1}, "found": True, "page_numbers": [5],
            "values": [{"min": 3, "max": 30, "unit": "V", "source_text": "VCC Supply voltage 3 to 30 V"}]}
    decoy = {**good, "claim_id": "decoy",
             "values": [{"min": 2.7, "max": 5.5, "unit": "V", "source_text": "Supply Voltage VDD 2.7 — 5.5 V"}]}
    trace = _write_jsonl(tmp_path / "cells.jsonl", [good, decoy])
    result = CliRunner().invoke(cli, ["detect", "--trace", str(trace), "--datasheet", str(pdf)])
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert {(g["claim_id"], g["outcome"]) for g in out["grounding"]} == {("good", "grounded"),
                                                                          ("decoy", "quote_not_found")}


def test_dsx_trace_tree_export(tmp_path: Path) -> None:
    run = RunBuilder().navigate("build_datasheet")
    run.submit(ANSWER)
    root, *children = run.spans
    tree = {"job_id": "j", "span_count": len(run.spans), "roots": [{**root, "children": children}]}
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(tree))
    fmt, records = load_records(path)
    assert fmt == "dsx" and len(records) == 1
    assert records[0].counts_before_answer() == {"build_datasheet": 1, "submit_extraction": 1}
