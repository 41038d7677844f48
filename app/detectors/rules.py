"""Detector rules: each one reads a run record (and, where it needs them, the grounding results, the requested
parameter and the cross-check answer) and returns a verdict: evaluable or not, and its findings.

Every rule has a name, a version (bump it when its logic changes, so old flags stay interpretable), a default
severity, and a human sentence per finding; its evidence always has ``span_ids``. A rule that lacks the data it
needs says *not evaluable* (with the reason) instead of guessing: e.g. call order on a count-only record.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from app.detectors import plausibility
from app.detectors.config import RuleSettings, rule_settings
from app.detectors.dimensions import printed
from app.detectors.grounding import (
    PROVENANCE_MIN_FRAGMENTS,
    PROVENANCE_MIN_SHARE,
    GroundingResult,
    Outcome,
    provenance,
    quote_in_text,
)
from app.detectors.record import Call, RunRecord, Submission
from app.detectors.severity import Severity
from app.dispatch import semconv as sc
from app.documents.index import DatasheetIndex

# Navigation calls that put document content in front of the model (the overview alone does not).
CONTENT_TOOLS = sc.NAVIGATION_TOOLS - {"build_datasheet"}
# Outcomes of an engine run that are errors rather than answers (budget exhaustion has its own rule).
ENGINE_ERROR_OUTCOMES = frozenset({"submit_not_called", "provider_error", "timeout", "engine_error",
                                   "invalid_submission", "internal_error"})


@dataclass
class Finding:
    rule: str
    version: str
    severity: Severity
    message: str
    evidence: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {"rule": self.rule, "rule_version": self.version, "severity": self.severity.value,
                "message": self.message, "evidence": self.evidence}


@dataclass
class Verdict:
    rule: str
    evaluable: bool
    reason: str | None = None
    findings: list[Finding] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"rule": self.rule, "evaluable": self.evaluable, "reason": self.reason,
                "flagged": bool(self.findings)}


@dataclass
class Context:
    """Everything the rules may read about one answer. ``record`` is ``None`` when no dispatch record exists;
    ``groundings`` is ``None`` when the document was not available."""

    record: RunRecord | None
    submission: Submission | None
    request: Mapping[str, Any] = field(default_factory=dict)  # name, unit, conditions
    groundings: list[GroundingResult] | None = None
    cross_check: Submission | None = None
    cross_check_error: str | None = None
    # Content rules the cross-check answer itself fails against the page (see ``audit``): a second opinion
    # that contradicts its own row is no evidence against the answer.
    cross_check_faults: list[str] = field(default_factory=list)
    error_code: str | None = None
    error_detail: str | None = None
    engine: str | None = None
    settings: RuleSettings = field(default_factory=RuleSettings)
    document: DatasheetIndex | None = None  # the intended PDF's index, for rules about the document itself
    model: str | None = None  # the answering model, when known beside the record

    @property
    def is_single_pass(self) -> bool:
        engine = self.engine or (self.record.engine if self.record else None) or ""
        return engine.replace("_", "-").startswith("single")

    @property
    def answered(self) -> bool:
        return self.submission is not None and self.error_code is None

    @property
    def outcome(self) -> str | None:
        if self.error_code:
            return self.error_code
        return self.record.outcome if self.record else None


@dataclass(frozen=True)
class Rule:
    name: str
    version: str
    severity: Severity
    summary: str
    check: Callable[[Rule, Context], Verdict]

    def finding(self, ctx: Context, message: str, evidence: dict[str, Any]) -> Finding:
        evidence = {"span_ids": [s for s in evidence.pop("span_ids", []) if s], **evidence}
        return Finding(self.name, self.version, ctx.settings.severity(self.name, self.severity), message, evidence)

    def run(self, ctx: Context) -> Verdict:
        if not ctx.settings.enabled(self.name):
            return Verdict(self.name, False, "disabled by configuration")
        return self.check(self, ctx)


def submit_span_ids(ctx: Context) -> list[str]:
    """The span of the call that submitted the answer under review, for a finding's evidence."""
    submit = ctx.record.submit_call if ctx.record else None
    return [submit.span_id] if submit and submit.span_id else []


def not_evaluable(rule: Rule, reason: str) -> Verdict:
    return Verdict(rule.name, False, reason)


def unreadable_on_document(rule: Rule, ctx: Context) -> Verdict | None:
    """For a rule that reads each reported value on the intended datasheet's pages: the verdict when it cannot (no
    value was reported, or the datasheet is not available), else ``None``."""
    if ctx.submission is None or not ctx.submission.found or not ctx.submission.values:
        return not_evaluable(rule, "no value was reported")
    if ctx.document is None or ctx.groundings is None:
        return not_evaluable(rule, "the intended datasheet is not available")
    return None


def answered_groundings(ctx: Context) -> Iterator[tuple[GroundingResult, dict[str, Any]]]:
    """Each grounding of a reported value, with that value as the document printed it (``dimensions.printed``)."""
    for grounding in ctx.groundings or []:
        if grounding.value_index < len(ctx.submission.values if ctx.submission else []):
            yield grounding, printed(ctx.submission.values[grounding.value_index])


def clean(rule: Rule) -> Verdict:
    return Verdict(rule.name, True)


def flag(rule: Rule, finding: Finding) -> Verdict:
    return Verdict(rule.name, True, findings=[finding])


def _ids(calls: list[Call]) -> list[str]:
    return [c.span_id for c in calls if c.span_id]


def _needs_answered_record(rule: Rule, ctx: Context, *, counts_ok: bool) -> Verdict | None:
    """The common preconditions of the dispatch rules; a verdict when the rule cannot run."""
    if ctx.record is None:
        return not_evaluable(rule, "no dispatch record was stored for this run")
    if not counts_ok and not ctx.record.has_call_detail:
        return not_evaluable(rule, "the record has tool counts only, not call order, outcomes or errors")
    if ctx.submission is None or not ctx.answered:
        return not_evaluable(rule, "no answer was submitted")
    if ctx.record.has_call_detail and not ctx.record.calls:
        return not_evaluable(rule, "the dispatch record holds no calls")
    return None


# ---------------------------------------------------------------------------------------------------------
# Dispatch rules.


def _tool_bypass(rule: Rule, ctx: Context) -> Verdict:
    if (blocked := _needs_answered_record(rule, ctx, counts_ok=True)) is not None:
        return blocked
    if ctx.is_single_pass:
        return not_evaluable(rule, "single-pass runs receive the document in the prompt")
    record = ctx.record
    assert record is not None
    counts = record.counts_before_answer()
    navigation = sum(n for tool, n in counts.items() if tool in sc.NAVIGATION_TOOLS)
    if navigation:
        return clean(rule)
    calls = record.calls_before_answer()
    return flag(rule, rule.finding(
        ctx, "The answer was submitted without opening the datasheet: no navigation tool was called before "
             "submit_extraction, so the value cannot have been read from this document.",
        {"span_ids": _ids(calls), "tool_counts": counts, "engine": record.engine},
    ))


def _verification_skipped(rule: Rule, ctx: Context) -> Verdict:
    if (blocked := _needs_answered_record(rule, ctx, counts_ok=True)) is not None:
        return blocked
    if ctx.is_single_pass:
        return not_evaluable(rule, "single-pass runs have no tools to cross-check with")
    record = ctx.record
    assert record is not None
    counts = record.counts_before_answer()
    navigation = {t: n for t, n in counts.items() if t in sc.NAVIGATION_TOOLS and n}
    if not navigation:
        return not_evaluable(rule, "no navigation call (see tool_bypass)")
    if any(counts.get(t) for t in sc.CROSS_CHECK_TOOLS):
        return clean(rule)
    nav_calls = [c for c in record.calls_before_answer()
                 if c.kind == "tool" and c.tool in sc.NAVIGATION_TOOLS and c.executed]
    return flag(rule, rule.finding(
        ctx, f"The datasheet was navigated ({', '.join(sorted(navigation))}) but the value was never cross-checked "
             f"with {' or '.join(sorted(sc.CROSS_CHECK_TOOLS))} before it was submitted.",
        {"span_ids": _ids(nav_calls), "tool_counts": counts},
    ))


def _tool_read_failure(rule: Rule, ctx: Context) -> Verdict:
    if (blocked := _needs_answered_record(rule, ctx, counts_ok=False)) is not None:
        return blocked
    record = ctx.record
    assert record is not None
    calls = record.calls_before_answer()
    unrecovered: list[Call] = []
    for i, call in enumerate(calls):
        if call.kind != "tool" or call.tool not in sc.NAVIGATION_TOOLS or not call.failed or not call.executed:
            continue
        later = calls[i + 1:]
        recovered = any(c.kind == "tool" and c.tool in CONTENT_TOOLS and c.outcome == "ok" for c in later)
        if not recovered:
            unrecovered.append(call)
    if not unrecovered:
        return clean(rule)
    described = ", ".join(f"{c.tool} ({c.outcome}{': ' + c.error_code if c.error_code else ''})"
                          for c in unrecovered)
    return flag(rule, rule.finding(
        ctx, f"A tool read failed and no later read succeeded before the answer: {described}. The value was "
             "submitted without document content behind it.",
        {"span_ids": _ids(unrecovered) + submit_span_ids(ctx),
         "failed_calls": [{"tool": c.tool, "outcome": c.outcome, "error_code": c.error_code} for c in unrecovered]},
    ))


def _no_tool_call_http_200(rule: Rule, ctx: Context) -> Verdict:
    if ctx.record is None:
        return not_evaluable(rule, "no dispatch record was stored for this run")
    if not ctx.record.has_call_detail:
        return not_evaluable(rule, "the record has tool counts only, not per-turn replies")
    turns = [c for c in ctx.record.calls_before_answer() if c.kind == "llm"]
    if not turns:
        return not_evaluable(rule, "the record holds no model turns")
    silent = [c for c in turns
              if c.outcome != "error" and (c.http_status in (None, 200))
              and (c.tool_required is not False)
              and ((c.tool_call_count == 0) if c.tool_call_count is not None else c.outcome in ("text_only", "empty"))]
    if not silent:
        return clean(rule)
    return flag(rule, rule.finding(
        ctx, f"{len(silent)} provider turn(s) returned HTTP 200 without the tool call the run required (the answer "
             "can only be given through submit_extraction): the gateway or backend may be masking tool calls.",
        {"span_ids": _ids(silent), "turns": [c.turn for c in silent],
         "outcomes": [c.outcome for c in silent]},
    ))


def _reasoning_dropped(rule: Rule, ctx: Context) -> Verdict:
    if ctx.record is None:
        return not_evaluable(rule, "no dispatch record was stored for this run")
    if not ctx.record.has_call_detail:
        return not_evaluable(rule, "the record has tool counts only, not per-turn reasoning")
    turns = [c for c in ctx.record.llm_calls if c.outcome != "error"]
    expected = [c for c in turns if c.reasoning_expected] or (turns if ctx.record.reasoning_expected else [])
    if ctx.record.reasoning_expected is None and not any(c.reasoning_expected is not None for c in turns):
        return not_evaluable(rule, "the record does not say whether the model was configured to reason")
    if not expected:
        return not_evaluable(rule, "the model was not configured to reason")
    if any(c.reasoning_present is None for c in expected):
        return not_evaluable(rule, "the record does not say whether reasoning came back")
    if any(c.reasoning_present for c in expected):
        return clean(rule)
    return flag(rule, rule.finding(
        ctx, f"The model is configured to reason, but none of its {len(expected)} successful turn(s) returned a "
             "reasoning trace: a gateway or passthrough may be dropping it silently.",
        {"span_ids": _ids(expected), "turns": len(expected)},
    ))


def _tool_content_mismatch(rule: Rule, ctx: Context) -> Verdict:
    if (blocked := _needs_answered_record(rule, ctx, counts_ok=False)) is not None:
        return blocked
    if ctx.document is None:
        return not_evaluable(rule, "the intended datasheet is not available")
    record = ctx.record
    assert record is not None
    min_share = float(ctx.settings.option(rule.name, "min_share", PROVENANCE_MIN_SHARE))
    checked: list[tuple[Call, Any]] = []
    for call in record.calls_before_answer():
        if call.kind == "tool" and call.tool in sc.NAVIGATION_TOOLS and call.outcome == "ok" and call.output:
            checked.append((call, provenance(ctx.document, call.output)))
    found = sum(p.found for _, p in checked)
    total = sum(p.total for _, p in checked)
    if total < PROVENANCE_MIN_FRAGMENTS:
        return not_evaluable(rule, f"the tools returned fewer than {PROVENANCE_MIN_FRAGMENTS} text fragments")
    share = found / total
    if share >= min_share:
        return clean(rule)
    foreign = [(c, p) for c, p in checked if p.total and p.share < min_share]
    return flag(rule, rule.finding(
        ctx, f"Only {found} of {total} text fragments the tools returned occur in this datasheet ({share:.0%}): "
             "the model read content from another document.",
        {"span_ids": [c.span_id for c, _ in foreign], "share": round(share, 3), "fragments": total,
         "min_share": min_share, "examples": [f for _, p in foreign for f in p.unmatched][:3]},
    ))


def _root_ids(ctx: Context) -> list[str]:
    if ctx.record is None:
        return []
    return [s for s in [ctx.record.root_span_id] if s] + _ids(
        [c for c in ctx.record.calls if c.outcome == "error"])


def _engine_error(rule: Rule, ctx: Context) -> Verdict:
    if ctx.record is not None and not ctx.record.has_call_detail and not ctx.error_code:
        return not_evaluable(rule, "the record has tool counts only, not the run's errors")
    outcome = ctx.outcome
    if outcome is None and ctx.submission is None:
        return not_evaluable(rule, "the run's outcome was not recorded")
    if outcome in (None, "submitted", "budget_exhausted"):
        return clean(rule)
    detail = ctx.error_detail or (ctx.record.error_detail if ctx.record else None)
    return flag(rule, rule.finding(
        ctx, f"The engine ended without an answer ({outcome}){': ' + detail if detail else ''}.",
        {"span_ids": _root_ids(ctx), "outcome": outcome, "detail": detail},
    ))


def _budget_exhausted(rule: Rule, ctx: Context) -> Verdict:
    if ctx.record is not None and not ctx.record.has_call_detail and not ctx.error_code:
        return not_evaluable(rule, "the record has tool counts only, not the run's outcome")
    if ctx.outcome is None and ctx.submission is None:
        return not_evaluable(rule, "the run's outcome was not recorded")
    if ctx.outcome != "budget_exhausted":
        return clean(rule)
    turns = len(ctx.record.llm_calls) if ctx.record else None
    return flag(rule, rule.finding(
        ctx, f"The run used up its budget (turns, tokens or time) before submitting an answer"
             f"{f' after {turns} model turn(s)' if turns else ''}.",
        {"span_ids": _root_ids(ctx), "turns": turns},
    ))


# ---------------------------------------------------------------------------------------------------------
# Source grounding.

_GROUNDING_SENTENCES = {
    Outcome.quote_not_found: "The quoted source text of {which} could not be found in this datasheet{extra}.",
    Outcome.value_not_in_quote: "The quote of {which} was found on page {page}, but the reported number(s) "
                                "{missing} do not occur in it.",
    Outcome.grounded_other_page: "The quote of {which} was found on page {page}, not on the reported page "
                                 "{reported}.",
}


def _quote_provenance(ctx: Context, quote: str | None) -> list[str]:
    """Span ids of tool calls whose output contains ``quote``: where the model could have read it."""
    if ctx.record is None or not ctx.record.has_call_detail or not quote:
        return []
    ids = []
    for call in ctx.record.calls_before_answer():
        if call.kind == "tool" and call.tool != sc.SUBMIT_TOOL and call.output is not None:
            text = call.output if isinstance(call.output, str) else _flatten(call.output)
            if quote_in_text(quote, text):
                ids.append(call.span_id)
    return [i for i in ids if i]


def _flatten(value: Any) -> str:
    if isinstance(value, Mapping):
        return " ".join(_flatten(v) for v in value.values())
    if isinstance(value, list | tuple):
        return " ".join(_flatten(v) for v in value)
    return value if isinstance(value, str) else ""


def _grounding_rule(outcome: Outcome) -> Callable[[Rule, Context], Verdict]:
    def check(rule: Rule, ctx: Context) -> Verdict:
        if ctx.submission is None or not ctx.submission.found or not (ctx.submission.values or
                                                                      ctx.submission.quote):
            return not_evaluable(rule, "no value was reported")
        if ctx.groundings is None:
            return not_evaluable(rule, "the intended datasheet is not available")
        hits = [g for g in ctx.groundings if g.outcome is outcome]
        if not hits:
            return clean(rule)
        values = ctx.submission.values
        quotes = {(values[g.value_index].get("quote") if g.value_index < len(values) else None)
                  or ctx.submission.quote for g in hits}
        seen_in = sorted({s for q in quotes for s in _quote_provenance(ctx, q)})
        which = (f"value {hits[0].value_index + 1}" if len(hits) == 1 and len(values) > 1
                 else "the answer" if len(hits) >= len(values) else
                 f"values {', '.join(str(g.value_index + 1) for g in hits)}")
        missing = sorted({f"{v:g}" for g in hits for v in (g.detail.get("missing_numbers") or {}).values()})
        extra = ""
        if outcome is Outcome.quote_not_found:
            if seen_in:
                extra = ", although a tool showed it to the model: the tools may have served other content"
            elif any(g.detail.get("reason") == "no quote was reported" for g in hits):
                extra = " (no quote was given)"
        message = _GROUNDING_SENTENCES[outcome].format(
            which=which, page=hits[0].page, missing=", ".join(missing) or "?", extra=extra,
            reported=", ".join(str(p) for p in hits[0].detail.get("reported_pages") or []) or "?",
        )
        return flag(rule, rule.finding(ctx, message, {
            "span_ids": (submit_span_ids(ctx)) + seen_in,
            "values": [g.to_dict() for g in hits],
            "quote_seen_in_tool_output": bool(seen_in),
        }))

    return check


# ---------------------------------------------------------------------------------------------------------
# Plausibility and cross-check.


def _plausibility_rule(check_name: str) -> Callable[[Rule, Context], Verdict]:
    def check(rule: Rule, ctx: Context) -> Verdict:
        if ctx.submission is None or not ctx.submission.found or not ctx.submission.values:
            return not_evaluable(rule, "no value was reported")
        requested_unit = ctx.request.get("unit")
        if check_name == "unit_dimension" and not requested_unit:
            return not_evaluable(rule, "no unit was requested")
        issues = [issue for i, value in enumerate(ctx.submission.values)
                  for issue in plausibility.check_value(i, value, requested_unit) if issue.check == check_name]
        if not issues:
            return clean(rule)
        sentences = "; ".join(f"value {issue.value_index + 1}: {issue.message}" for issue in issues)
        return flag(rule, rule.finding(ctx, f"Implausible answer: {sentences}.", {
            "span_ids": submit_span_ids(ctx),
            "issues": [{"value_index": i.value_index, "check": i.check, **i.detail} for i in issues],
        }))

    return check


def _describe(values: list[dict[str, Any]]) -> str:
    parts = []
    for value in values:
        numbers = plausibility.numbers_of(value)
        text = "/".join(f"{k} {v:g}" for k, v in numbers.items())
        parts.append(f"{text} {value.get('unit') or ''}".strip())
    return "; ".join(parts) or "no value"


def _disagrees_with_reader(rule: Rule, ctx: Context) -> Verdict:
    if ctx.cross_check is None:
        reason = f"the reader failed ({ctx.cross_check_error})" if ctx.cross_check_error else "no cross-check ran"
        return not_evaluable(rule, reason)
    if ctx.submission is None or not ctx.answered:
        return not_evaluable(rule, "no answer was submitted")
    if ctx.cross_check_faults:
        return not_evaluable(rule, "the reader's own answer fails " + ", ".join(ctx.cross_check_faults)
                             + " against the page")
    primary, reader = ctx.submission, ctx.cross_check
    rel_tol = float(ctx.settings.option(rule.name, "rel_tol", plausibility.DEFAULT_REL_TOL))
    evidence = {"span_ids": submit_span_ids(ctx), "primary": primary.values,
                "reader": reader.values, "rel_tol": rel_tol}
    if primary.found != reader.found:
        if primary.found:
            # The offline reader misses more than it mis-reads; a lone miss is not evidence against the answer.
            return clean(rule)
        return flag(rule, rule.finding(
            ctx, f"The answer says the parameter is not in the datasheet, but the offline reader found "
                 f"{_describe(reader.values)}.", {**evidence, "kind": "found_mismatch"}))
    if not primary.found:
        return clean(rule)
    disagreeing = []
    for i, value in enumerate(primary.values):
        verdicts = [plausibility.values_agree(value, other, rel_tol) for other in reader.values]
        if any(v is True for v in verdicts) or all(v is None for v in verdicts):
            continue
        disagreeing.append(i)
    if not disagreeing:
        return clean(rule)
    return flag(rule, rule.finding(
        ctx, f"The answer ({_describe([primary.values[i] for i in disagreeing])}) disagrees with the offline "
             f"reader ({_describe(reader.values)}) after unit normalisation.",
        {**evidence, "kind": "value_mismatch", "value_indices": disagreeing}))


def _model_name(name: str) -> str:
    return name.rsplit("/", 1)[-1].lower()


def _answered_by_other_model(call: Call, aliases: set[str]) -> bool:
    """Whether a turn was answered by another model than requested. Through a gateway its headers decide (a
    fallback attempted, or another model group); directly, the response model must be the requested one or a
    dated snapshot of it (``gpt-4o`` answered as ``gpt-4o-2024-08-06``)."""
    if call.gateway_fallbacks:
        return True
    if call.gateway_model_group is not None:
        return call.gateway_model_group not in aliases
    if not call.response_model or not call.requested_model:
        return False
    return not _model_name(call.response_model).startswith(_model_name(call.requested_model))


def _model_fallback(rule: Rule, ctx: Context) -> Verdict:
    if ctx.record is None:
        return not_evaluable(rule, "no dispatch record was stored for this run")
    if not ctx.record.has_call_detail:
        return not_evaluable(rule, "the record has tool counts only, not per-turn models")
    turns = [c for c in ctx.record.llm_calls if c.outcome != "error"]
    if not any(c.response_model or c.gateway_model_group or c.gateway_fallbacks is not None for c in turns):
        return not_evaluable(rule, "no turn recorded which model answered")
    aliases = {a for c in turns for a in (c.requested_model, ctx.record.model) if a}
    swapped = [c for c in turns if _answered_by_other_model(c, aliases)]
    if not swapped:
        return clean(rule)
    answered = sorted({c.response_model or c.gateway_model_group or "?" for c in swapped})
    return flag(rule, rule.finding(
        ctx, f"{len(swapped)} of {len(turns)} turn(s) were answered by another model than requested "
             f"({', '.join(answered)} for {ctx.record.model}): the gateway fell back, so the run mixed models and "
             "the answer is not the requested model's.",
        {"span_ids": _ids(swapped), "requested": ctx.record.model, "answered_by": answered,
         "fallbacks": sum(c.gateway_fallbacks or 0 for c in swapped)},
    ))


# ---------------------------------------------------------------------------------------------------------
# The rule table.

RULES: tuple[Rule, ...] = (
    Rule("tool_bypass", "1", Severity.error, "An answer with no navigation call.", _tool_bypass),
    Rule("verification_skipped", "1", Severity.warning,
         "Navigation, but no search_text/extract_table_markdown cross-check.", _verification_skipped),
    Rule("tool_read_failure", "1", Severity.warning,
         "A tool errored or returned empty content and the answer came after it, with no successful read since.",
         _tool_read_failure),
    Rule("no_tool_call_http_200", "1", Severity.warning,
         "A provider turn returned HTTP 200 with no tool call where one was required.", _no_tool_call_http_200),
    Rule("reasoning_dropped", "1", Severity.warning, "The model is configured to reason but no trace came back.",
         _reasoning_dropped),
    Rule("tool_content_mismatch", "1", Severity.error,
         "Most document text the tools returned is not in the intended datasheet.", _tool_content_mismatch),
    Rule("engine_error", "1", Severity.error, "The engine ended with an error instead of an answer.", _engine_error),
    Rule("budget_exhausted", "1", Severity.error, "The run exhausted its budget before answering.",
         _budget_exhausted),
    Rule("quote_not_found", "2", Severity.error, "The quote cannot be re-found in the intended PDF.",
         _grounding_rule(Outcome.quote_not_found)),
    Rule("value_not_in_quote", "3", Severity.warning, "A reported number does not occur in the located quote.",
         _grounding_rule(Outcome.value_not_in_quote)),
    Rule("grounded_other_page", "1", Severity.info, "The quote is on another page than the one reported.",
         _grounding_rule(Outcome.grounded_other_page)),
    Rule("value_ordering", "2", Severity.warning, "min <= typical <= max does not hold.",
         _plausibility_rule("ordering")),
    Rule("unit_dimension", "2", Severity.warning, "The unit does not measure the requested quantity.",
         _plausibility_rule("unit_dimension")),
    Rule("sentinel_value", "1", Severity.warning, "A placeholder number was reported.",
         _plausibility_rule("sentinel")),
    Rule("disagrees_with_reader", "2", Severity.warning,
         "The offline reader materially disagrees after unit normalisation.", _disagrees_with_reader),
    Rule("model_fallback", "1", Severity.warning,
         "A turn was answered by another model than the one requested (a gateway fallback).", _model_fallback),
)

DISPATCH_RULES = ("tool_bypass", "verification_skipped", "tool_read_failure", "no_tool_call_http_200",
                  "reasoning_dropped", "tool_content_mismatch", "engine_error", "budget_exhausted", "model_fallback")


def fingerprint(rules: tuple[Rule, ...], settings: RuleSettings | None = None) -> str:
    """A short fingerprint of ``rules`` as in force (each rule's name and version, and the operator's overrides):
    two runs with the same value were judged by the same rules."""
    overrides = {name: [o.enabled, o.severity.value if o.severity else None, dict(o.options)]
                 for name, o in (settings or rule_settings()).overrides.items()}
    table = [f"{rule.name}@{rule.version}" for rule in rules]
    digest = hashlib.sha256(json.dumps([table, overrides], sort_keys=True, default=str).encode())
    return digest.hexdigest()[:12]


def evaluate(ctx: Context, rules: tuple[Rule, ...] = RULES) -> list[Verdict]:
    """Run every rule on one answer; disabled rules come back not evaluable with that reason."""
    return [rule.run(ctx) for rule in rules]
