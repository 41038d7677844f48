"""Failure attribution: the study's per-call rubric, applied deterministically to a run record.

Each call gets one category and the party it is charged to:

* ``tool_output_error`` (charged to the tool): a tool errored or returned no content, for reasons of its own.
* ``tool_selection`` (reasoning): a tool used wrongly: arguments the tool rejected (bad page, unknown section),
  a malformed submission, or an answer submitted without any navigation.
* ``condition_omission`` (reasoning): the answer does not carry the operating conditions that were requested.
* ``verification_skipped`` (reasoning): the answer was submitted after navigation without a cross-check call.
* ``engine_error`` (engine): the provider failed, or replied without the tool call the run required, or the
  run ended without an answer.
* ``unclassified`` (unknown): the answer failed grounding but no call explains why (e.g. tools that worked
  but served other content).
* ``ok`` (none).

Directional only: the study's rubric agreed with one annotator at kappa 0.61.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from app.detectors.grounding import GroundingResult, Outcome
from app.detectors.page_text import normalised
from app.detectors.record import Call, RunRecord, Submission
from app.dispatch import semconv as sc

CATEGORIES = ("ok", "tool_output_error", "tool_selection", "condition_omission", "verification_skipped",
              "engine_error", "unclassified")
CHARGED_TO = {"ok": "none", "tool_output_error": "tool", "tool_selection": "reasoning",
              "condition_omission": "reasoning", "verification_skipped": "reasoning", "engine_error": "engine",
              "unclassified": "unknown"}
# Error codes a document tool returns because of the arguments it was given, not because it failed.
CALLER_ERROR_CODES = frozenset({"invalid_argument", "invalid_arguments", "page_out_of_range", "no_such_section",
                                "no_such_table", "unknown_tool", "tool_not_offered", "tool_not_available",
                                "phase_closed", "invalid_submission", "validation_error", "bad_cursor"})


@dataclass
class CallAttribution:
    span_id: str | None
    category: str
    detail: str | None = None

    @property
    def charged_to(self) -> str:
        return CHARGED_TO[self.category]

    def to_dict(self) -> dict[str, Any]:
        return {"span_id": self.span_id, "category": self.category, "charged_to": self.charged_to,
                "detail": self.detail}


_TOKEN = re.compile(r"[a-z0-9µμ.+\-]+", re.IGNORECASE)


def condition_reflected(condition: str, conditions: str, quote: str = "") -> bool:
    """Whether a requested condition is carried by the answer: verbatim (spacing, case and glyph variants
    ignored) in its conditions or quote, or token by token in its conditions. Tokens alone are not enough in
    the quote: a table row quote holds the symbols of many conditions at once."""
    wanted = normalised(condition)
    if wanted and (wanted in normalised(conditions) or wanted in normalised(quote)):
        return True
    tokens = [normalised(t) for t in _TOKEN.findall(condition)]
    tokens = [t for t in tokens if t and t not in ("=", "-", "+")]
    target = normalised(conditions)
    return bool(tokens) and all(t in target for t in tokens)


def omitted_conditions(requested: Iterable[str], submission: Submission) -> list[str]:
    conditions = " ; ".join(c for v in submission.values for c in v.get("conditions") or [])
    quote = " ".join([submission.quote or "", *(str(v.get("quote") or "") for v in submission.values)])
    return [c for c in requested if c and c.strip() and not condition_reflected(c, conditions, quote)]


def _llm(call: Call) -> CallAttribution:
    if call.outcome == "error" or (call.http_status is not None and call.http_status >= 400):
        return CallAttribution(call.span_id, "engine_error",
                               f"provider error{': ' + call.error_code if call.error_code else ''}")
    no_tool = (call.tool_call_count == 0) if call.tool_call_count is not None else call.outcome in ("text_only",
                                                                                                     "empty")
    if no_tool and call.tool_required is not False:
        return CallAttribution(call.span_id, "engine_error", "reply without the required tool call")
    return CallAttribution(call.span_id, "ok")


def _tool(call: Call) -> CallAttribution:
    if not call.failed:
        return CallAttribution(call.span_id, "ok")
    if call.error_code in CALLER_ERROR_CODES:
        return CallAttribution(call.span_id, "tool_selection", f"{call.tool} rejected its arguments: {call.error_code}")
    return CallAttribution(call.span_id, "tool_output_error",
                           f"{call.tool} {'returned no content' if call.outcome == 'empty' else 'failed'}"
                           f"{': ' + call.error_code if call.error_code else ''}")


def _submit(call: Call, record: RunRecord, request: Mapping[str, Any], submission: Submission | None,
            groundings: list[GroundingResult] | None) -> CallAttribution:
    if call.failed:
        return CallAttribution(call.span_id, "tool_selection", "the submission was rejected")
    before = [c for c in record.calls if c.order < call.order and c.kind == "tool" and c.executed]
    navigation = [c for c in before if c.tool in sc.NAVIGATION_TOOLS]
    if not navigation and not record.is_single_pass:
        return CallAttribution(call.span_id, "tool_selection", "answered without any navigation call")
    if submission is not None and submission.found:
        omitted = omitted_conditions(request.get("conditions") or [], submission)
        if omitted:
            return CallAttribution(call.span_id, "condition_omission", "requested condition(s) not in the answer: "
                                   + "; ".join(omitted))
    if navigation and not any(c.tool in sc.CROSS_CHECK_TOOLS for c in navigation):
        return CallAttribution(call.span_id, "verification_skipped", "no search_text/extract_table_markdown call")
    failed = [g for g in groundings or [] if g.outcome in (Outcome.quote_not_found, Outcome.value_not_in_quote)]
    if failed:
        return CallAttribution(call.span_id, "unclassified",
                               "answer failed grounding (" + ", ".join(sorted({g.outcome.value for g in failed}))
                               + ") with no failing call to explain it")
    return CallAttribution(call.span_id, "ok")


def attribute(record: RunRecord | None, *, request: Mapping[str, Any] | None = None,
              submission: Submission | None = None, groundings: list[GroundingResult] | None = None,
              error_code: str | None = None) -> list[CallAttribution]:
    """The rubric for every call of ``record`` (plus one row for the run when it ended in an engine error)."""
    request = request or {}
    if record is None or not record.has_call_detail:
        rows: list[CallAttribution] = []
    else:
        submission = submission or record.submission
        accepted = record.submit_call
        rows = []
        for call in record.calls:
            if call.kind == "llm":
                rows.append(_llm(call))
            elif call.tool == sc.SUBMIT_TOOL and (call is accepted or call.failed):
                rows.append(_submit(call, record, request, submission, groundings))
            else:
                rows.append(_tool(call))
    outcome = error_code or (record.outcome if record else None)
    if outcome not in (None, "submitted"):
        rows.append(CallAttribution(record.root_span_id if record else None, "engine_error",
                                    f"the run ended without an answer: {outcome}"))
    return rows


def summarize(rows: Iterable[CallAttribution | Mapping[str, Any]]) -> dict[str, Any]:
    """Counts by category and by party charged, for a run or a whole job."""
    categories: Counter[str] = Counter()
    for row in rows:
        categories[row.category if isinstance(row, CallAttribution) else str(row["category"])] += 1
    charged: Counter[str] = Counter()
    for category, count in categories.items():
        charged[CHARGED_TO.get(category, "unknown")] += count
    failing = {k: v for k, v in categories.items() if k != "ok"}
    return {
        "calls": sum(categories.values()),
        "by_category": {c: categories[c] for c in CATEGORIES if categories[c]},
        "charged_to": dict(sorted(charged.items())),
        "primary_cause": max(failing, key=lambda k: (failing[k], -CATEGORIES.index(k))) if failing else "ok",
    }
