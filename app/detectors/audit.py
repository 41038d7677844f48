"""Audit of one answer: the detector rules, grounding of every value and attribution of every call.

The pure part of review (a run record in, verdicts, groundings and attributions out), shared by the extraction
flow, ``dsx detect`` and the benchmark.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from app.detectors import attribution as rubric
from app.detectors.answer_rules import ANSWER_RULES
from app.detectors.conditions import CONDITION_RULES
from app.detectors.config import RuleSettings, rule_settings
from app.detectors.document_rules import DOCUMENT_RULES
from app.detectors.figure_text import FIGURE_TEXT_RULES
from app.detectors.grounding import GroundingResult, ground_values
from app.detectors.plus_minus import PLUS_MINUS_RULES
from app.detectors.quantity import QUANTITY_RULES
from app.detectors.rating_table import RATING_TABLE_RULES
from app.detectors.record import RunRecord, Submission
from app.detectors.row_parameter import ROW_PARAMETER_RULES
from app.detectors.rules import RULES, Context, Finding, Rule, Verdict, evaluate, fingerprint
from app.detectors.severity import Severity
from app.detectors.structural import STRUCTURAL_RULES
from app.detectors.summary import SUMMARY_RULES
from app.detectors.variant import VARIANT_RULES
from app.documents.index import DatasheetIndex

#: Every rule an audit evaluates, in the order its verdicts are reported.
ALL_RULES: tuple[Rule, ...] = (
    *RULES, *ANSWER_RULES, *STRUCTURAL_RULES, *QUANTITY_RULES, *PLUS_MINUS_RULES, *VARIANT_RULES,
    *RATING_TABLE_RULES, *ROW_PARAMETER_RULES, *SUMMARY_RULES, *CONDITION_RULES, *FIGURE_TEXT_RULES, *DOCUMENT_RULES,
)


def rule_set_version(settings: RuleSettings | None = None) -> str:
    """The fingerprint of every rule an audit runs, with the operator's overrides (stamped on each run)."""
    return fingerprint(ALL_RULES, settings)


@dataclass
class Audit:
    verdicts: list[Verdict]
    groundings: list[GroundingResult] | None
    attributions: list[rubric.CallAttribution] = field(default_factory=list)

    @property
    def findings(self) -> list[Finding]:
        return [f for v in self.verdicts for f in v.findings]

    @property
    def needs_review(self) -> bool:
        return any(f.severity.rank >= Severity.warning.rank for f in self.findings)

    def to_dict(self) -> dict[str, Any]:
        return {
            "flags": [f.to_dict() for f in self.findings],
            "grounding": [g.to_dict() for g in self.groundings or []],
            "evaluable": [v.to_dict() for v in self.verdicts],
            "attribution": [a.to_dict() for a in self.attributions],
            "attribution_summary": rubric.summarize(self.attributions),
        }


def page_rules() -> tuple[Rule, ...]:
    """The rules that find an answer at odds with the page it quotes (a quote that cannot be found at all is
    unchecked, not at odds)."""
    return (*(r for r in RULES if r.name == "value_not_in_quote"), *STRUCTURAL_RULES, *QUANTITY_RULES,
            *PLUS_MINUS_RULES, *VARIANT_RULES, *RATING_TABLE_RULES)


def _faults(cross_check: Submission, index: DatasheetIndex, request: Mapping[str, Any],
            settings: RuleSettings) -> list[str]:
    """The page rules the cross-check answer itself fails."""
    if not cross_check.found or not cross_check.values:
        return []
    groundings = ground_values(index, cross_check.values, cross_check.quote, cross_check.pages)
    ctx = Context(record=None, submission=cross_check, request=request, groundings=groundings, settings=settings,
                  document=index)
    return sorted({f.rule for v in evaluate(ctx, page_rules()) for f in v.findings
                   if f.severity.rank >= Severity.warning.rank})


def audit(record: RunRecord | None, *, submission: Submission | None = None, index: DatasheetIndex | None = None,
          request: Mapping[str, Any] | None = None, cross_check: Submission | None = None,
          cross_check_error: str | None = None, error_code: str | None = None, error_detail: str | None = None,
          engine: str | None = None, settings: RuleSettings | None = None, model: str | None = None) -> Audit:
    """Audit one answer. ``submission`` defaults to the record's own; without ``index`` grounding is skipped."""
    submission = submission if submission is not None else (record.submission if record else None)
    if error_code is None and record is not None and record.outcome not in (None, "submitted"):
        error_code = record.outcome
    request = dict(request or (record.parameter if record else {}) or {})
    groundings = None
    if index is not None and submission is not None and submission.found:
        groundings = ground_values(index, submission.values, submission.quote, submission.pages)
    settings = settings or rule_settings()
    faults = _faults(cross_check, index, request, settings) if cross_check is not None and index is not None else []
    ctx = Context(record=record, submission=submission, request=request, groundings=groundings,
                  cross_check=cross_check, cross_check_error=cross_check_error, cross_check_faults=faults,
                  error_code=error_code,
                  error_detail=error_detail, engine=engine or (record.engine if record else None),
                  settings=settings, document=index,
                  model=model or (record.model if record else None))
    verdicts = evaluate(ctx, ALL_RULES)
    attributions = rubric.attribute(record, request=request, submission=submission, groundings=groundings,
                                    error_code=error_code)
    return Audit(verdicts, groundings, attributions)
