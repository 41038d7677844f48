"""A ``±X`` limit read as one number: ``plus_minus_limit``.

A datasheet prints a limit of either sign as ``±X`` (accuracy ``± 1 hPa``: min -X, max +X). An answer that
reports X alone as a typical value states a number the page never gives. Judged on the text the value was
located in, and only when every printing of the reported number there carries the ``±``: a number also
printed on its own is left alone, and so is a nominal with its tolerance (``38.5 +/- 2``), whose nominal is a
typical value in its own right.
"""

from __future__ import annotations

from typing import Any

from app.detectors import plausibility
from app.detectors.dimensions import printed
from app.detectors.grounding import Outcome
from app.detectors.page_text import numbers_in, same_number
from app.detectors.row_alignment import without_identifiers
from app.detectors.rules import Context, Rule, Verdict, clean, flag, not_evaluable, submit_span_ids
from app.detectors.severity import Severity


def misread(value: dict[str, Any], located_text: str) -> dict[str, Any] | None:
    """The ``±X`` printing that a lone typical X misreads in ``located_text``, or ``None``."""
    numbers = plausibility.numbers_of(value)
    if set(numbers) != {"typical"}:
        return None
    typical = numbers["typical"]
    occurrences = [n for n in numbers_in(without_identifiers(located_text))
                   if any(same_number(typical, v) for v in n.values)]
    if occurrences and all(n.plus_minus for n in occurrences):
        return {"printed": f"±{typical:g}"}
    return None


def _plus_minus_limit(rule: Rule, ctx: Context) -> Verdict:
    if ctx.submission is None or not ctx.submission.found or not ctx.submission.values:
        return not_evaluable(rule, "no value was reported")
    if ctx.groundings is None:
        return not_evaluable(rule, "the intended datasheet is not available")
    issues = []
    for grounding in ctx.groundings:
        if grounding.outcome not in (Outcome.grounded, Outcome.grounded_other_page) \
                or grounding.value_index >= len(ctx.submission.values):
            continue
        value = printed(ctx.submission.values[grounding.value_index])
        found = misread(value, str(grounding.detail.get("located_text") or ""))
        if found:
            issues.append({"value_index": grounding.value_index, **found})
    if not issues:
        return clean(rule)
    described = "; ".join(f"value {i['value_index'] + 1}: the page prints {i['printed']}, a limit of either sign "
                          "(min and max), but it was reported as a typical value" for i in issues)
    return flag(rule, rule.finding(ctx, f"A ± limit was read as one number: {described}.",
                                   {"span_ids": submit_span_ids(ctx), "issues": issues}))


PLUS_MINUS_RULES: tuple[Rule, ...] = (
    Rule("plus_minus_limit", "1", Severity.warning,
         "A printed ±X was reported as a lone typical value.", _plus_minus_limit),
)
