"""Audit one answer on a synthetic datasheet the way the review layer does after a run: the answer's values are
grounded on the stated page, then the given rules read them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from app.detectors.grounding import ground_values
from app.detectors.record import Submission
from app.detectors.rules import Context, Rule, Verdict, evaluate
from app.documents.index import DatasheetIndex


def audit_answer(index: DatasheetIndex, value: dict[str, Any], quote: str, request: dict[str, Any],
                 rules: Sequence[Rule], page: int = 1, confidence: float | None = None) -> list[Verdict]:
    """The verdicts of ``rules`` on an answer of one ``value`` quoting ``quote`` from ``page``."""
    submission = Submission(found=True, values=[value], quote=quote, pages=[page], confidence=confidence)
    ctx = Context(record=None, submission=submission, document=index, request=request,
                  groundings=ground_values(index, submission.values, quote, [page]))
    return evaluate(ctx, rules)
