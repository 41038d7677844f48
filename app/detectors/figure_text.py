"""Is the value a specification at all? ``figure_text``.

A graph's caption and axes print numbers that are not specifications: a selection or a condition in the caption
(``DC current gain as a function of collector current``, ``Output voltage vs. temperature``), tick labels and
the figure's drawing number beside the axis titles. A value read from such text cannot be the parameter asked
for, however exactly it is quoted: flagged when the value's line is a graph caption (a quantity *as a function
of* or *versus* another, ``vs.`` in lower case: ``Vs`` is a pin). A bare-number quote is not judged here: readers
quote a table cell that way.
"""

from __future__ import annotations

import re
from typing import Any

from app.detectors.dimensions import printed
from app.detectors.rules import (
    Context,
    Rule,
    Verdict,
    clean,
    flag,
    submit_span_ids,
    unreadable_on_document,
)
from app.detectors.severity import Severity
from app.detectors.structural import grounded_row

_CAPTION = re.compile(r"\b(?i:as a function of|versus)\b|\bvs\.?\s|^\s*(?i:fig(?:ure)?)\.?\s*\d")


def is_caption(text: str) -> bool:
    return _CAPTION.search(text) is not None


def _figure_text(rule: Rule, ctx: Context) -> Verdict:
    if (unreadable := unreadable_on_document(rule, ctx)) is not None:
        return unreadable
    found: list[dict[str, Any]] = []
    for grounding in ctx.groundings:
        value = printed(ctx.submission.values[grounding.value_index]) \
            if grounding.value_index < len(ctx.submission.values) else None
        row = grounded_row(ctx.document, grounding, dict(ctx.request), value)
        if row is not None and is_caption(row.text):
            found.append({"kind": "caption", "value_index": grounding.value_index, "page": grounding.page,
                          "row_text": row.text})
    if not found:
        return clean(rule)
    first = found[0]
    where = f"the value's line on page {first['page']} is a graph caption (“{first['row_text']}”)"
    return flag(rule, rule.finding(ctx, f"The value was not read from a specification: {where}.",
                                   {"span_ids": submit_span_ids(ctx), "places": found}))


FIGURE_TEXT_RULES: tuple[Rule, ...] = (
    Rule("figure_text", "2", Severity.warning,
         "The value comes from a graph's caption, not from a specification.", _figure_text),
)
