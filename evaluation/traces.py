"""Run records from traces recorded elsewhere, so ``dsx detect`` audits them with the production rules.

* ``dsx``: our own spans exported as JSON (one span per line, or the trace tree); read by
  ``app.detectors.record.records_from_spans``, as the pipeline reads the database.
* ``reference``: the reference harness's step JSONL (a ``kind: session_start`` line, then one step per line
  with ``claim_id``, ``engine``, ``phase``, ``step``, ``turn_idx``, ``kind`` = ``tool_call|reasoning_only|
  final_output``, ``tool_name``, ``tool_input_summary``, ``tool_output_summary``, ``error``, ...).
* ``cell``: per-cell JSON with ``claim_id``, ``n_tool_calls_by_tool`` and the submitted extraction; it has
  tool counts only, so rules that need call order, outcomes or errors are *not evaluable* on it
  (``RunRecord.has_call_detail`` is false) rather than guessed.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from app.detectors.record import (
    Call,
    RunRecord,
    Submission,
    as_list,
    is_empty_content,
    parsed_json,
    records_from_spans,
    to_bool,
    to_int,
)
from app.dispatch import semconv as sc

FORMATS = ("dsx", "reference", "cell")


class TraceFormatError(ValueError):
    """A trace file that is not in any of the supported formats (or not in the one requested)."""


# -------------------------------------------------------------------------------------------------------------
# Reference harness step JSONL.

_REFERENCE_STEP_KINDS = ("tool_call", "reasoning_only", "final_output")
_REASONING_KEYS = ("reasoning", "reasoning_effort", "thinking", "extended_thinking", "thinking_budget",
                   "reasoning_enabled")


def _reasoning_configured(session: Mapping[str, Any]) -> bool | None:
    """Whether the session's model was configured to reason; ``None`` when the session line does not say."""
    containers = [session] + [v for v in session.values() if isinstance(v, Mapping)]
    for container in containers:
        for key in _REASONING_KEYS:
            if key in container:
                value = container[key]
                if isinstance(value, str):
                    return value.strip().lower() not in ("", "none", "off", "false", "disabled", "0")
                if isinstance(value, Mapping):
                    return to_bool(value.get("enabled", value.get("type") not in (None, "disabled"))) or False
                return bool(value)
    return None


def _submission_from_text(value: Any) -> Submission | None:
    data = parsed_json(value)
    if isinstance(data, Mapping):
        data = data.get("arguments", data)
        data = parsed_json(data)
    if isinstance(data, Mapping) and ("values" in data or "found" in data):
        return Submission.from_mapping(data)
    return None


def records_from_reference(lines: Iterable[Mapping[str, Any]]) -> list[RunRecord]:
    """One record per ``claim_id`` (per engine when one file holds several), steps in file order."""
    session: dict[str, Any] = {}
    groups: dict[tuple[str, str], list[Mapping[str, Any]]] = defaultdict(list)
    for line in lines:
        if line.get("kind") == "session_start":
            session = dict(line)
            continue
        claim = str(line.get("claim_id") or "unknown")
        groups[(claim, str(line.get("engine") or ""))].append(line)
    reasoning_expected = _reasoning_configured(session)
    model = session.get("model") or session.get("model_id")
    records: list[RunRecord] = []
    for (claim, engine), steps in groups.items():
        steps = sorted(steps, key=lambda s: (to_int(s.get("step")) if s.get("step") is not None else 0))
        extraction_phase = _extraction_phase(steps)
        calls: list[Call] = []
        submission: Submission | None = None
        errors: list[str] = []
        turns: dict[int, list[Mapping[str, Any]]] = defaultdict(list)
        for step in steps:
            turn = to_int(step.get("turn_idx"))
            turns[turn if turn is not None else len(turns)].append(step)
        for turn, turn_steps in turns.items():
            tool_steps = [s for s in turn_steps if s.get("kind") == "tool_call"]
            reasoning = any(str(s.get("agent_reasoning") or "").strip() for s in turn_steps)
            turn_error = next((s.get("error") for s in turn_steps if s.get("error") and s.get("kind") != "tool_call"),
                              None)
            first = turn_steps[0]
            phase = str(first.get("phase")) if first.get("phase") is not None else None
            calls.append(Call(
                kind="llm", order=len(calls), span_id=f"step:{first.get('step')}", turn=turn, phase=phase,
                outcome="error" if turn_error else ("tool_call" if tool_steps else "text_only"),
                error_code="provider_error" if turn_error else None, error_message=str(turn_error or "") or None,
                http_status=None if turn_error else 200, tool_call_count=len(tool_steps),
                tool_required=None, reasoning_present=reasoning, reasoning_expected=reasoning_expected,
            ))
            for step in tool_steps:
                error = step.get("error")
                output = step.get("tool_output_summary")
                outcome = "error" if error else ("empty" if is_empty_content(output) else "ok")
                tool = str(step.get("tool_name") or "")
                step_phase = str(step.get("phase")) if step.get("phase") is not None else None
                calls.append(Call(
                    kind="tool", order=len(calls), span_id=f"step:{step.get('step')}", turn=turn,
                    phase=step_phase, tool=tool, outcome=outcome,
                    error_code=_error_code(error), error_message=str(error) if error else None,
                    input=parsed_json(step.get("tool_input_summary")), output=parsed_json(output),
                ))
                if tool == sc.SUBMIT_TOOL and not error and step_phase == extraction_phase:
                    submission = _submission_from_text(step.get("tool_input_summary")) or submission
            for step in turn_steps:
                if step.get("kind") == "final_output" and submission is None:
                    submission = (_submission_from_text(step.get("final_output"))
                                  or _submission_from_text(step.get("output"))
                                  or _submission_from_text(step.get("tool_output_summary")))
                if step.get("error"):
                    errors.append(str(step.get("error")))
        extraction_calls = [c for c in calls if c.phase in (None, extraction_phase)]
        last_turn_failed = bool(calls) and calls[-1].kind == "llm" and calls[-1].outcome == "error"
        outcome = "submitted" if submission is not None else ("provider_error" if last_turn_failed
                                                             else "submit_not_called")
        record = RunRecord(
            source="reference", key=claim, calls=extraction_calls, engine=_engine_name(engine),
            model=model, outcome=outcome, error_detail="; ".join(errors) or None, submission=submission,
            reasoning_expected=reasoning_expected,
        )
        record.tool_counts = record.counts_before_answer()
        records.append(record)
    return records


def _extraction_phase(steps: list[Mapping[str, Any]]) -> str | None:
    phases = [str(s.get("phase")) for s in steps if s.get("phase") is not None]
    for phase in phases:
        if phase.lower() in ("extraction", "extract", "1", "phase1", "phase_1"):
            return phase
    return phases[0] if phases else None


def _error_code(error: Any) -> str | None:
    if not error:
        return None
    if isinstance(error, Mapping):
        return str(error.get("code") or error.get("type") or "error")
    return "error"


def _engine_name(engine: str | None) -> str | None:
    if not engine:
        return None
    lowered = engine.lower().replace("_", "-")
    if "single" in lowered or "oneshot" in lowered or "one-shot" in lowered:
        return "single-pass"
    if "agent" in lowered or "tool" in lowered:
        return "agentic"
    return engine


# -------------------------------------------------------------------------------------------------------------
# Per-cell count format.


def record_from_cell(cell: Mapping[str, Any]) -> RunRecord:
    extraction = cell.get("extraction") if isinstance(cell.get("extraction"), Mapping) else cell
    counts = {str(k): int(v) for k, v in (cell.get("n_tool_calls_by_tool") or {}).items() if to_int(v) is not None}
    error = cell.get("error") or cell.get("error_code")
    has_answer = any(k in extraction for k in ("found", "values"))
    return RunRecord(
        source="cell", key=str(cell.get("claim_id") or "unknown"), tool_counts=counts, has_call_detail=False,
        engine=_engine_name(cell.get("engine")), model=cell.get("model"),
        outcome=(str(error) if error else ("submitted" if has_answer else None)),
        error_detail=str(error) if error else None,
        submission=Submission.from_mapping(extraction) if has_answer else None,
        parameter=_request_of(cell),
    )


def _request_of(cell: Mapping[str, Any]) -> dict[str, Any]:
    """The parameter the cell's model was asked for, when the cell records it (``request`` or a bare name)."""
    request = cell.get("request")
    if isinstance(request, Mapping) and request.get("name"):
        return {"name": str(request["name"]), "unit": request.get("unit"),
                "conditions": as_list(request.get("conditions"))}
    if isinstance(cell.get("parameter"), str) and cell["parameter"].strip():
        return {"name": cell["parameter"], "unit": None, "conditions": []}
    return {}


# -------------------------------------------------------------------------------------------------------------
# Files.


def _parse_json_lines(text: str) -> list[Any]:
    stripped = text.strip()
    if not stripped:
        return []
    if stripped[0] in "[{":
        try:
            whole = json.loads(stripped)
        except json.JSONDecodeError:
            whole = None
        if isinstance(whole, list):
            return whole
        if isinstance(whole, Mapping):
            return [whole]
    items: list[Any] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            items.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise TraceFormatError(f"line {number} is not JSON: {exc.msg}") from exc
    return items


def _flatten_trees(items: list[Any]) -> list[Any]:
    """Spans exported as a tree (``{"roots": [...]}`` or nodes with ``children``) as a flat list."""
    flat: list[Any] = []
    stack = list(reversed(items))
    while stack:
        item = stack.pop()
        if isinstance(item, Mapping) and "roots" in item and "span_id" not in item:
            stack.extend(reversed(list(item.get("roots") or [])))
            continue
        if isinstance(item, Mapping) and "children" in item:
            stack.extend(reversed(list(item.get("children") or [])))
            item = {k: v for k, v in item.items() if k != "children"}
        flat.append(item)
    return flat


def detect_format(items: list[Any]) -> str:
    """``dsx`` (spans), ``reference`` (steps) or ``cell`` (counts), from the objects' keys."""
    objects = [i for i in items if isinstance(i, Mapping)]
    if not objects:
        raise TraceFormatError("the trace holds no JSON objects")
    if any(o.get("kind") == "session_start" for o in objects) or any(
            o.get("kind") in _REFERENCE_STEP_KINDS and "claim_id" in o for o in objects):
        return "reference"
    if any("n_tool_calls_by_tool" in o for o in objects):
        return "cell"
    if any("span_id" in o and "name" in o for o in objects):
        return "dsx"
    raise TraceFormatError("unrecognised trace: expected dsx spans, reference steps, or per-cell counts")


def load_records(path: Path, fmt: str | None = None) -> tuple[str, list[RunRecord]]:
    """Read a trace file and build its records; ``fmt`` forces a format, else it is detected."""
    if fmt is not None and fmt not in FORMATS:
        raise TraceFormatError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")
    items = _flatten_trees(_parse_json_lines(Path(path).read_text(encoding="utf-8")))
    fmt = fmt or detect_format(items)
    objects = [i for i in items if isinstance(i, Mapping)]
    if not objects:
        raise TraceFormatError("the trace holds no JSON objects")
    if fmt == "dsx":
        return fmt, records_from_spans(objects)
    if fmt == "reference":
        return fmt, records_from_reference(objects)
    return fmt, [record_from_cell(o) for o in objects]
