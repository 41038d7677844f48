"""A neutral run record, so one set of rules audits runs recorded three ways.

* ``dsx``: our own spans (``SpanRecord`` rows, or their JSON export: one span per line, or the trace tree),
  names and attributes from ``app.dispatch.semconv``.
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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.dispatch import semconv as sc

FORMATS = ("dsx", "reference", "cell")
# Tool errors of calls the loop refused before anything ran: the tool was not offered, or the phase had closed.
REFUSED_CODES = frozenset({"tool_not_available", "phase_closed", "unknown_tool", "tool_not_offered"})


class TraceFormatError(ValueError):
    """A trace file that is not in any of the supported formats (or not in the one requested)."""


@dataclass
class Call:
    """One model turn (``kind="llm"``) or one tool execution (``kind="tool"``) of a run, in order."""

    kind: str
    order: int
    span_id: str | None = None
    turn: int | None = None
    phase: str | None = None
    tool: str | None = None
    outcome: str | None = None  # tool: ok | error | empty; llm: tool_call | text_only | empty | error
    error_code: str | None = None
    error_message: str | None = None
    http_status: int | None = None
    tool_call_count: int | None = None
    tool_required: bool | None = None
    reasoning_present: bool | None = None
    reasoning_expected: bool | None = None
    requested_model: str | None = None  # llm: the model the call asked for
    response_model: str | None = None  # llm: the model the provider says answered
    gateway_model_group: str | None = None  # llm: the gateway's model group that served it
    gateway_fallbacks: int | None = None  # llm: fallbacks the gateway attempted
    input: Any = None
    output: Any = None

    @property
    def failed(self) -> bool:
        return self.outcome in ("error", "empty")

    @property
    def executed(self) -> bool:
        """False for a call refused before it ran (a tool that was not offered): it read nothing."""
        return not (self.outcome == "error" and self.error_code in REFUSED_CODES)


@dataclass
class Submission:
    """What the run answered, in one shape for all formats. Values are dicts with min/typical/max/unit/
    conditions and, where the format has it per value, their own ``quote`` and ``pages``."""

    found: bool
    values: list[dict[str, Any]] = field(default_factory=list)
    quote: str | None = None
    pages: list[int] = field(default_factory=list)
    confidence: float | None = None
    reason: str | None = None

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> Submission:
        """From ``SubmittedExtraction`` arguments, an ``Extraction``-like dict, or a cell's extraction."""
        values = []
        for raw in data.get("values") or []:
            if not isinstance(raw, Mapping):
                continue
            value = {
                "min": raw.get("min"),
                "typical": raw.get("typical", raw.get("typ")),
                "max": raw.get("max"),
                "unit": raw.get("unit"),
                "conditions": _as_list(raw.get("conditions")),
            }
            if raw.get("source_text") or raw.get("quote"):
                value["quote"] = raw.get("source_text") or raw.get("quote")
            if raw.get("pages") or raw.get("page"):
                value["pages"] = _pages(raw.get("pages") or raw.get("page"))
            values.append(value)
        pages = _pages(data.get("page_numbers") or data.get("pages") or data.get("source_page"))
        return cls(
            found=bool(data.get("found", bool(values))),
            values=values,
            quote=data.get("quote") or data.get("source_text"),
            pages=pages,
            confidence=_float(data.get("confidence")),
            reason=data.get("reason"),
        )


@dataclass
class RunRecord:
    """One engine run for one parameter (or claim)."""

    source: str  # dsx | reference | cell
    key: str  # claim id, or "job/parameter/role", or the trace id
    calls: list[Call] = field(default_factory=list)
    tool_counts: dict[str, int] = field(default_factory=dict)
    has_call_detail: bool = True
    engine: str | None = None  # agentic | single-pass | None (unknown)
    model: str | None = None
    role: str = "primary"
    outcome: str | None = None  # submitted | submit_not_called | budget_exhausted | provider_error | timeout
    error_detail: str | None = None
    submission: Submission | None = None
    root_span_id: str | None = None
    reasoning_expected: bool | None = None
    parameter: dict[str, Any] = field(default_factory=dict)  # name, unit, conditions when known

    # -- views used by the rules -------------------------------------------------------------------------

    @property
    def tool_calls(self) -> list[Call]:
        return [c for c in self.calls if c.kind == "tool"]

    @property
    def llm_calls(self) -> list[Call]:
        return [c for c in self.calls if c.kind == "llm"]

    @property
    def submit_call(self) -> Call | None:
        """The accepted submit (the last non-failed one), or ``None``."""
        submits = [c for c in self.tool_calls if c.tool == sc.SUBMIT_TOOL and not c.failed]
        return submits[-1] if submits else None

    def calls_before_answer(self) -> list[Call]:
        """Calls of the extraction phase: everything up to the accepted submit (all calls if none)."""
        submit = self.submit_call
        if submit is None:
            return list(self.calls)
        return [c for c in self.calls if c.order <= submit.order]

    def counts_before_answer(self) -> dict[str, int]:
        if not self.has_call_detail:
            return dict(self.tool_counts)
        counts: dict[str, int] = defaultdict(int)
        for call in self.calls_before_answer():
            if call.kind == "tool" and call.tool and call.executed:
                counts[call.tool] += 1
        return dict(counts)

    @property
    def is_single_pass(self) -> bool:
        return (self.engine or "").replace("_", "-").startswith("single")

    @property
    def answered(self) -> bool:
        return self.submission is not None and (self.outcome in (None, "submitted"))


# -------------------------------------------------------------------------------------------------------------
# Small coercions shared by the parsers.


def _as_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value] if value.strip() else []
    return [str(v) for v in value if v is not None]


def _pages(value: Any) -> list[int]:
    if value is None:
        return []
    items = value if isinstance(value, list | tuple) else [value]
    pages: list[int] = []
    for item in items:
        try:
            pages.append(int(item))
        except (TypeError, ValueError):
            continue
    return pages


def _float(value: Any) -> float | None:
    try:
        return None if value is None else float(value)
    except (TypeError, ValueError):
        return None


def _int(value: Any) -> int | None:
    try:
        return None if value is None else int(value)
    except (TypeError, ValueError):
        return None


def _bool(value: Any) -> bool | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value.strip().lower() in ("1", "true", "yes")
    return bool(value)


def _json(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except (json.JSONDecodeError, ValueError):
            return value
    return value


def _is_empty_content(value: Any) -> bool:
    """Whether a tool's output carries no document content (``""``, ``{}``, ``[]``, only empty fields)."""
    value = _json(value)
    if value is None:
        return True
    if isinstance(value, str):
        return not value.strip() or value.strip() in ("null", "{}", "[]", '""')
    if isinstance(value, Mapping):
        content = {k: v for k, v in value.items()
                   if k not in ("tool", "status", "untrusted_document_data", "truncated", "next_cursor", "notes",
                                "query", "page", "section", "start_page", "end_page", "total_hits", "width", "height")}
        return all(_is_empty_content(v) for v in content.values()) if content else True
    if isinstance(value, list | tuple):
        return all(_is_empty_content(v) for v in value)
    return False


# -------------------------------------------------------------------------------------------------------------
# dsx spans.


def _span_dict(span: Any) -> dict[str, Any]:
    if isinstance(span, Mapping):
        row = dict(span)
    else:
        row = {key: getattr(span, key, None) for key in (
            "trace_id", "span_id", "parent_span_id", "name", "start_ns", "end_ns", "status_code", "status_message",
            "attributes", "payload", "events")}
    # A span exported before the database moved its payload out still carries it as attributes.
    attributes = dict(row.get("attributes") or {})
    payload = dict(row.get("payload") or {})
    for key, name in ((sc.DSX_PAYLOAD_INPUT, "input"), (sc.DSX_PAYLOAD_OUTPUT, "output")):
        if key in attributes:
            raw = attributes.pop(key)
            payload.setdefault(name, _json(raw))
    row["attributes"], row["payload"] = attributes, payload
    return row


def _tool_outcome(attributes: Mapping[str, Any], payload: Mapping[str, Any], status: str | None) -> tuple[
        str, str | None, str | None]:
    """(outcome, error code, error message) of one tool span, from its attributes or else its payload."""
    outcome = attributes.get(sc.DSX_TOOL_OUTCOME)
    code = attributes.get(sc.DSX_TOOL_ERROR_CODE)
    message = None
    output = _json(payload.get("output")) if payload else None
    if isinstance(output, Mapping):
        envelope_result = output.get("result", output)
        if isinstance(envelope_result, Mapping) and isinstance(envelope_result.get("error"), Mapping):
            code = code or envelope_result["error"].get("code")
            message = envelope_result["error"].get("message")
            outcome = outcome or "error"
        if output.get("status") == "error":
            outcome = outcome or "error"
    if outcome is None:
        if status == "ERROR":
            outcome = "error"
        elif payload and "output" in payload:
            outcome = "empty" if _is_empty_content(payload.get("output")) else "ok"
        else:
            outcome = "ok"
    return str(outcome), code, message


def records_from_spans(spans: Iterable[Any], root_span_id: str | None = None) -> list[RunRecord]:
    """One record per ``invoke_agent`` span (only ``root_span_id``'s when given), calls in start order."""
    rows = [_span_dict(s) for s in spans]
    children: dict[str | None, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        children[row.get("parent_span_id")].append(row)
    roots = [r for r in rows if r.get("name") == sc.SPAN_INVOKE_AGENT
             and (root_span_id is None or r.get("span_id") == root_span_id)]
    records: list[RunRecord] = []
    for root in sorted(roots, key=lambda r: r.get("start_ns") or 0):
        descendants: list[dict[str, Any]] = []
        stack = [root.get("span_id")]
        while stack:
            for child in children.get(stack.pop(), []):
                descendants.append(child)
                stack.append(child.get("span_id"))
        records.append(_record_from_root(root, descendants))
    return records


def _record_from_root(root: dict[str, Any], descendants: list[dict[str, Any]]) -> RunRecord:
    attrs = root.get("attributes") or {}
    calls: list[Call] = []
    for row in sorted(descendants, key=lambda r: (r.get("start_ns") or 0, r.get("span_id") or "")):
        a = row.get("attributes") or {}
        payload = row.get("payload") or {}
        name = row.get("name") or ""
        operation = a.get(sc.GEN_AI_OPERATION)
        if operation == "execute_tool" or name.startswith(sc.SPAN_TOOL_PREFIX + " "):
            outcome, code, message = _tool_outcome(a, payload, row.get("status_code"))
            calls.append(Call(
                kind="tool", order=len(calls), span_id=row.get("span_id"),
                turn=_int(a.get(sc.DSX_LLM_TURN)), phase=a.get(sc.DSX_PHASE),
                tool=a.get(sc.GEN_AI_TOOL_NAME) or name[len(sc.SPAN_TOOL_PREFIX) + 1:],
                outcome=outcome, error_code=code, error_message=message or row.get("status_message"),
                input=_json(payload.get("input")), output=_json(payload.get("output")),
            ))
        elif operation == "chat" or name.startswith(sc.SPAN_CHAT_PREFIX + " "):
            error_type = a.get(sc.DSX_LLM_ERROR_TYPE)
            outcome = a.get(sc.DSX_LLM_OUTCOME) or ("error" if error_type or row.get("status_code") == "ERROR"
                                                    else None)
            calls.append(Call(
                kind="llm", order=len(calls), span_id=row.get("span_id"), turn=_int(a.get(sc.DSX_LLM_TURN)),
                phase=a.get(sc.DSX_PHASE), outcome=outcome, error_code=error_type,
                error_message=row.get("status_message"), http_status=_int(a.get(sc.DSX_HTTP_STATUS)),
                tool_call_count=_int(a.get(sc.DSX_LLM_TOOL_CALLS)),
                tool_required=_bool(a.get(sc.DSX_LLM_TOOL_REQUIRED)),
                reasoning_present=_bool(a.get(sc.DSX_LLM_REASONING_PRESENT)),
                reasoning_expected=_bool(a.get(sc.DSX_LLM_REASONING_EXPECTED)),
                requested_model=a.get(sc.GEN_AI_REQUEST_MODEL) or a.get(sc.DSX_MODEL_ALIAS),
                response_model=a.get(sc.GEN_AI_RESPONSE_MODEL), gateway_model_group=a.get(sc.DSX_GATEWAY_MODEL_GROUP),
                gateway_fallbacks=_int(a.get(sc.DSX_GATEWAY_ATTEMPTED_FALLBACKS)),
            ))
    submission = None
    accepted = [c for c in calls if c.kind == "tool" and c.tool == sc.SUBMIT_TOOL and not c.failed]
    if accepted and isinstance(accepted[-1].input, Mapping):
        arguments = accepted[-1].input.get("arguments", accepted[-1].input)
        if isinstance(_json(arguments), Mapping):
            submission = Submission.from_mapping(_json(arguments))
    expected = [c.reasoning_expected for c in calls if c.kind == "llm" and c.reasoning_expected is not None]
    record = RunRecord(
        source="dsx",
        key=str(root.get("trace_id") or root.get("span_id")),
        calls=calls,
        engine=attrs.get(sc.DSX_ENGINE),
        model=attrs.get(sc.GEN_AI_REQUEST_MODEL) or attrs.get(sc.DSX_MODEL_ALIAS),
        role=attrs.get(sc.DSX_ROLE) or "primary",
        outcome=attrs.get(sc.DSX_OUTCOME),
        error_detail=attrs.get(sc.DSX_ERROR_DETAIL) or root.get("status_message"),
        submission=submission,
        root_span_id=root.get("span_id"),
        reasoning_expected=any(expected) if expected else None,
    )
    record.tool_counts = record.counts_before_answer()
    return record


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
                    return _bool(value.get("enabled", value.get("type") not in (None, "disabled"))) or False
                return bool(value)
    return None


def _submission_from_text(value: Any) -> Submission | None:
    data = _json(value)
    if isinstance(data, Mapping):
        data = data.get("arguments", data)
        data = _json(data)
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
        steps = sorted(steps, key=lambda s: (_int(s.get("step")) if s.get("step") is not None else 0))
        extraction_phase = _extraction_phase(steps)
        calls: list[Call] = []
        submission: Submission | None = None
        errors: list[str] = []
        turns: dict[int, list[Mapping[str, Any]]] = defaultdict(list)
        for step in steps:
            turn = _int(step.get("turn_idx"))
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
                outcome = "error" if error else ("empty" if _is_empty_content(output) else "ok")
                tool = str(step.get("tool_name") or "")
                step_phase = str(step.get("phase")) if step.get("phase") is not None else None
                calls.append(Call(
                    kind="tool", order=len(calls), span_id=f"step:{step.get('step')}", turn=turn,
                    phase=step_phase, tool=tool, outcome=outcome,
                    error_code=_error_code(error), error_message=str(error) if error else None,
                    input=_json(step.get("tool_input_summary")), output=_json(output),
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
    counts = {str(k): int(v) for k, v in (cell.get("n_tool_calls_by_tool") or {}).items() if _int(v) is not None}
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
                "conditions": _as_list(request.get("conditions"))}
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
