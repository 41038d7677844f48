"""A neutral run record, so one set of rules audits any run: built here from our own spans (``SpanRecord``
rows, or their JSON export), names and attributes from ``app.dispatch.semconv``.

Other tools' trace formats are read into the same record by ``evaluation.traces`` (``dsx detect``); a record
with tool counts only (``has_call_detail`` false) leaves the rules that need call order, outcomes or errors
*not evaluable* rather than guessed.
"""
from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from app.dispatch import semconv as sc

# Tool errors of calls the loop refused before anything ran: the tool was not offered, or the phase had closed.
REFUSED_CODES = frozenset({"tool_not_available", "phase_closed", "unknown_tool", "tool_not_offered"})


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
                "conditions": as_list(raw.get("conditions")),
            }
            if raw.get("source_text") or raw.get("quote"):
                value["quote"] = raw.get("source_text") or raw.get("quote")
            if raw.get("pages") or raw.get("page"):
                value["pages"] = _pages(raw.get("pages") or raw.get("page"))
            if isinstance(raw.get("printed"), Mapping):
                # A value converted to the requested unit keeps what the page printed: grounding looks for that.
                value["printed"] = dict(raw["printed"])
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

    # -- derived facts the rules read ---------------------------------------------------------------------

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


def as_list(value: Any) -> list[str]:
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


def to_int(value: Any) -> int | None:
    try:
        return None if value is None else int(value)
    except (TypeError, ValueError):
        return None


def to_bool(value: Any) -> bool | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value.strip().lower() in ("1", "true", "yes")
    return bool(value)


def parsed_json(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except (json.JSONDecodeError, ValueError):
            return value
    return value


def is_empty_content(value: Any) -> bool:
    """Whether a tool's output carries no document content (``""``, ``{}``, ``[]``, only empty fields)."""
    value = parsed_json(value)
    if value is None:
        return True
    if isinstance(value, str):
        return not value.strip() or value.strip() in ("null", "{}", "[]", '""')
    if isinstance(value, Mapping):
        content = {k: v for k, v in value.items()
                   if k not in ("tool", "status", "untrusted_document_data", "truncated", "next_cursor", "notes",
                                "query", "page", "section", "start_page", "end_page", "total_hits", "width", "height")}
        return all(is_empty_content(v) for v in content.values()) if content else True
    if isinstance(value, list | tuple):
        return all(is_empty_content(v) for v in value)
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
            payload.setdefault(name, parsed_json(raw))
    row["attributes"], row["payload"] = attributes, payload
    return row


def _tool_outcome(attributes: Mapping[str, Any], payload: Mapping[str, Any], status: str | None) -> tuple[
        str, str | None, str | None]:
    """(outcome, error code, error message) of one tool span, from its attributes or else its payload."""
    outcome = attributes.get(sc.DSX_TOOL_OUTCOME)
    code = attributes.get(sc.DSX_TOOL_ERROR_CODE)
    message = None
    output = parsed_json(payload.get("output")) if payload else None
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
            outcome = "empty" if is_empty_content(payload.get("output")) else "ok"
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
                turn=to_int(a.get(sc.DSX_LLM_TURN)), phase=a.get(sc.DSX_PHASE),
                tool=a.get(sc.GEN_AI_TOOL_NAME) or name[len(sc.SPAN_TOOL_PREFIX) + 1:],
                outcome=outcome, error_code=code, error_message=message or row.get("status_message"),
                input=parsed_json(payload.get("input")), output=parsed_json(payload.get("output")),
            ))
        elif operation == "chat" or name.startswith(sc.SPAN_CHAT_PREFIX + " "):
            error_type = a.get(sc.DSX_LLM_ERROR_TYPE)
            outcome = a.get(sc.DSX_LLM_OUTCOME) or ("error" if error_type or row.get("status_code") == "ERROR"
                                                    else None)
            calls.append(Call(
                kind="llm", order=len(calls), span_id=row.get("span_id"), turn=to_int(a.get(sc.DSX_LLM_TURN)),
                phase=a.get(sc.DSX_PHASE), outcome=outcome, error_code=error_type,
                error_message=row.get("status_message"), http_status=to_int(a.get(sc.DSX_HTTP_STATUS)),
                tool_call_count=to_int(a.get(sc.DSX_LLM_TOOL_CALLS)),
                tool_required=to_bool(a.get(sc.DSX_LLM_TOOL_REQUIRED)),
                reasoning_present=to_bool(a.get(sc.DSX_LLM_REASONING_PRESENT)),
                reasoning_expected=to_bool(a.get(sc.DSX_LLM_REASONING_EXPECTED)),
                requested_model=a.get(sc.GEN_AI_REQUEST_MODEL) or a.get(sc.DSX_MODEL_ALIAS),
                response_model=a.get(sc.GEN_AI_RESPONSE_MODEL), gateway_model_group=a.get(sc.DSX_GATEWAY_MODEL_GROUP),
                gateway_fallbacks=to_int(a.get(sc.DSX_GATEWAY_ATTEMPTED_FALLBACKS)),
            ))
    submission = None
    accepted = [c for c in calls if c.kind == "tool" and c.tool == sc.SUBMIT_TOOL and not c.failed]
    if accepted and isinstance(accepted[-1].input, Mapping):
        arguments = accepted[-1].input.get("arguments", accepted[-1].input)
        if isinstance(parsed_json(arguments), Mapping):
            submission = Submission.from_mapping(parsed_json(arguments))
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
