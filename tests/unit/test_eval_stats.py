"""One-sided Clopper-Pearson bounds, per-claim grouping, and stability across repeats."""

from __future__ import annotations

from typing import Any

import pytest

from evaluation.stats import claim_group_rate, lower_bound, rate, stability, upper_bound


def test_zero_and_all_successes_have_closed_forms() -> None:
    # With k = 0 the upper bound solves (1 - p)^n = alpha; with k = n the lower bound solves p^n = alpha.
    for n in (1, 11, 50, 207):
        assert upper_bound(0, n) == pytest.approx(1 - 0.05 ** (1 / n), rel=1e-9)
        assert lower_bound(n, n) == pytest.approx(0.05 ** (1 / n), rel=1e-9)
        assert lower_bound(0, n) == 0.0 and upper_bound(n, n) == 1.0


def test_bounds_bracket_the_rate_and_tighten_with_more_trials() -> None:
    small, large = rate(5, 10), rate(50, 100)
    assert small.lower < 0.5 < small.upper and large.lower < 0.5 < large.upper
    assert large.upper - large.lower < small.upper - small.lower
    # Known values of the exact one-sided 95% bounds for 5/10 (beta quantiles).
    assert small.lower == pytest.approx(0.2224, abs=1e-4) and small.upper == pytest.approx(0.7776, abs=1e-4)
    with pytest.raises(ValueError):
        upper_bound(3, 2)
    assert rate(0, 0).to_dict()["rate"] is None


def cell(claim: str, flagged: bool, repeat: int = 1, exact: bool = True, model: str = "m") -> dict[str, Any]:
    return {"claim_id": claim, "model": model, "engine": "agentic", "arm": "clean", "repeat": repeat,
            "flagged": flagged, "grade": {"exact": exact}}


def test_rates_are_counted_per_claim_not_per_cell() -> None:
    # Claim a is flagged in 1 of 3 repeats, claim b never, claim c always.
    cells = [cell("a", True, 1), cell("a", False, 2), cell("a", False, 3), cell("b", False, 1), cell("b", False, 2),
             cell("c", True, 1), cell("c", True, 2)]
    anywhere = claim_group_rate(cells, lambda c: c["flagged"], any)
    everywhere = claim_group_rate(cells, lambda c: c["flagged"], all)
    assert (anywhere.k, anywhere.n) == (2, 3) and (everywhere.k, everywhere.n) == (1, 3)
    assert anywhere.upper == pytest.approx(upper_bound(2, 3))


def test_stability_needs_repeats_and_compares_verdicts() -> None:
    cells = [cell("a", False, 1, exact=True), cell("a", False, 2, exact=True),
             cell("b", False, 1, exact=True), cell("b", False, 2, exact=False),
             cell("c", False, 1, exact=False)]
    group = stability(cells)["m | agentic | clean"]
    assert group["claims_repeated"] == 2 and group["claims_stable"] == 1
    assert group["unstable_claims"] == ["b"] and group["stable_share"] == 0.5
