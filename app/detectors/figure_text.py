"""Is the value a specification at all? ``figure_text``.

A graph's caption and axes print numbers that are not specifications: a selection or a condition in the caption
(``DC current gain as a function of collector current``, ``Output voltage vs. temperature``), tick labels and
the figure's drawing number beside the axis titles. A value read from such text cannot be the parameter asked
for, however exactly it is quoted: flagged when the value's line is a graph caption, or when the quote names
nothing but the number itself (no word ties it to any parameter).
"""

from __future__ import annotations

import re
from typing import Any

from app.detectors import plausibility
from app.detectors.grounding import Outcome
from app.detectors.rules import Context, Rule, Verdict, clean, flag, not_evaluable
from app.detectors.severity import Severity
from app.detectors.structural import row_at

_CAPTION = re.compile(r"\bas a function of\b|\bversus\b|\bvs\.?(?=\s)|^\s*fig(?:ure)?\.?\s*\d", re.IGNORECASE)
_WORD = re.compile(r"[^\W\d_]{2,}")


def is_caption(text: str) -> bool:
    return _CAPTION.search(text) is not None


def names_nothing(quote: str) -> bool:
    """Whether a quote holds no word but units: a bare number is no evidence of what it specifies."""
    return not any(plausibility.parse_unit(w) is None for w in _WORD.findall(quote))


def _figure_text(rule: Rule, ctx: Context) -> Verdict:
    if ctx.submission is None or not ctx.submission.found or not ctx.submission.values:
        return not_evaluable(rule, "no value was reported")
    found: list[dict[str, Any]] = []
    quote = " ".join(str(ctx.submission.quote or "").split())
    if quote and names_nothing(quote):
        found.append({"kind": "bare_quote", "quote": quote})
    if ctx.document is not None:
        for grounding in ctx.groundings or []:
            boxes = grounding.detail.get("value_boxes") or []
            if grounding.outcome not in (Outcome.grounded, Outcome.grounded_other_page) or not boxes \
                    or not grounding.page:
                continue
            row = row_at(ctx.document, grounding.page, boxes[0])
            if row is not None and is_caption(row.text):
                found.append({"kind": "caption", "value_index": grounding.value_index, "page": grounding.page,
                              "row_text": row.text})
    if not found:
        return clean(rule)
    first = found[0]
    where = f"the quote “{first['quote']}” names no parameter" if first["kind"] == "bare_quote" \
        else f"the value's line on page {first['page']} is a graph caption (“{first['row_text']}”)"
    submit = ctx.record.submit_call if ctx.record else None
    return flag(rule, rule.finding(ctx, f"The value was not read from a specification: {where}.",
                                   {"span_ids": [submit.span_id] if submit else [], "places": found}))


FIGURE_TEXT_RULES: tuple[Rule, ...] = (
    Rule("figure_text", "1", Severity.warning,
         "The value comes from a graph's caption, or its quote names nothing but the number.", _figure_text),
)
