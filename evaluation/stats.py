"""Rates with honest bounds: one-sided 95% Clopper-Pearson bounds, counted per claim group.

Cells of the same claim are not independent (the same page, the same wording, the same model's habits), so a
rate over cells overstates the evidence: 3 repeats of 20 claims are not 60 trials. Detector rates are therefore
counted over claims: a claim is flagged on an arm when the rule flagged *any* of its cells (for false positives,
the conservative reading) or *all* of them (for recall, the conservative reading), and the bound is computed on
(claims flagged, claims).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from typing import Any, TypeVar

from scipy.stats import beta

CONFIDENCE = 0.95

T = TypeVar("T")


def upper_bound(k: int, n: int, confidence: float = CONFIDENCE) -> float:
    """One-sided Clopper-Pearson upper bound on a proportion after ``k`` successes in ``n`` trials."""
    _check(k, n)
    if k >= n:
        return 1.0
    return float(beta.ppf(confidence, k + 1, n - k))


def lower_bound(k: int, n: int, confidence: float = CONFIDENCE) -> float:
    """One-sided Clopper-Pearson lower bound on a proportion after ``k`` successes in ``n`` trials."""
    _check(k, n)
    if k <= 0:
        return 0.0
    return float(beta.ppf(1.0 - confidence, k, n - k + 1))


def _check(k: int, n: int) -> None:
    if n < 0 or k < 0 or k > n:
        raise ValueError(f"need 0 <= k <= n, got k={k}, n={n}")


@dataclass
class Rate:
    k: int
    n: int
    lower: float
    upper: float

    @property
    def rate(self) -> float | None:
        return self.k / self.n if self.n else None

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "rate": self.rate, "confidence": CONFIDENCE, "one_sided": True}


def rate(k: int, n: int) -> Rate:
    """A proportion with both one-sided bounds (each at the 95% level on its own); none are defined for n=0."""
    if n == 0:
        return Rate(k=0, n=0, lower=0.0, upper=1.0)
    return Rate(k=k, n=n, lower=lower_bound(k, n), upper=upper_bound(k, n))


def group_by(items: Iterable[T], key: Callable[[T], Any]) -> dict[Any, list[T]]:
    groups: dict[Any, list[T]] = {}
    for item in items:
        groups.setdefault(key(item), []).append(item)
    return groups


def claim_group_rate(cells: list[dict[str, Any]], predicate: Callable[[dict[str, Any]], bool],
                     reduce: Callable[[Iterable[bool]], bool]) -> Rate:
    """(claims whose cells satisfy ``predicate`` under ``reduce`` (any/all), claims)."""
    groups = group_by(cells, lambda c: c["claim_id"])
    hits = sum(1 for members in groups.values() if reduce(predicate(c) for c in members))
    return rate(hits, len(groups))


def stability(cells: list[dict[str, Any]], verdict: str = "exact") -> dict[str, Any]:
    """Claims whose verdict was the same in every repeat, per (model, engine, arm).

    Only groups with at least two repeats of a claim say anything; a claim seen once is not counted.
    """
    result: dict[str, Any] = {}
    for (model, engine, arm), members in sorted(group_by(cells, lambda c: (c["model"], c["engine"], c["arm"])).items()):
        per_claim = group_by(members, lambda c: c["claim_id"])
        repeated = {claim: group for claim, group in per_claim.items() if len(group) >= 2}
        stable = [claim for claim, group in repeated.items() if len({bool(c["grade"][verdict]) for c in group}) == 1]
        result[f"{model} | {engine} | {arm}"] = {
            "model": model, "engine": engine, "arm": arm,
            "claims_repeated": len(repeated), "claims_stable": len(stable),
            "stable_share": len(stable) / len(repeated) if repeated else None,
            "unstable_claims": sorted(set(repeated) - set(stable)),
        }
    return result
