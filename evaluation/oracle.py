"""The measurement oracle: does a physical measurement reproduce a stated value?

A measurement ``m ± u`` is judged against the stated limits of a claim (or of an extraction) whose own tolerance
is ``t``. The verdict is decided only by disagreements larger than the combined uncertainty
``k = √(u² + t²)``:

* against a limit (min and/or max): **pass** when the measurement is inside every stated limit by more than
  ``k``; **fail** when it is outside some limit by more than ``k``; otherwise **inconclusive**;
* against a typical value alone (no limit): **fail** when ``|m − typ| > k``, otherwise **inconclusive** (a typical
  value is not a guarantee, so agreement cannot confirm it);
* **inconclusive** whenever one of the decisive operating conditions could not be matched by the apparatus,
  whatever the numbers say.

The oracle is pluggable: anything with ``measurement_for(claim_id)`` serves measurements; :class:`FileOracle`
reads them from a YAML file::

    version: 1
    measurements:
      - claim: <claim id>
        value: 945.285
        u: 0.080                 # standard uncertainty, in `unit`
        unit: hPa                # optional: defaults to the claim's unit
        tolerance: 0.0           # optional: t, overrides the claim's `tolerance` (default 0)
        decisive_conditions: []  # optional: which claim conditions decide the value (default: all of them)
        matched_conditions: []   # the decisive conditions the apparatus reproduced
"""

from __future__ import annotations

import enum
import math
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from app.errors import InvalidInput
from evaluation.units import ascii_unit, convert


class Verdict(enum.StrEnum):
    passed = "pass"
    failed = "fail"
    inconclusive = "inconclusive"


class Measurement(BaseModel):
    model_config = ConfigDict(extra="forbid")

    claim: str
    value: float
    u: float = Field(ge=0)
    unit: str | None = None
    tolerance: float | None = Field(default=None, ge=0)
    decisive_conditions: list[str] | None = None
    matched_conditions: list[str] = Field(default_factory=list)
    notes: str | None = None


@dataclass
class Stated:
    """What is being checked: limits and/or a typical value, with its tolerance and operating conditions."""

    min: float | None = None
    typical: float | None = None
    max: float | None = None
    unit: str | None = None
    tolerance: float = 0.0
    conditions: list[str] = field(default_factory=list)


@dataclass
class OracleResult:
    verdict: Verdict
    reason: str
    combined_uncertainty: float | None = None
    margin: float | None = None  # signed: > 0 inside every limit, < 0 outside one (in the measurement's unit)
    unmatched_conditions: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["verdict"] = self.verdict.value
        return data


class Oracle(Protocol):
    def measurement_for(self, claim_id: str) -> Measurement | None: ...


def _condition_key(text: str) -> str:
    return re.sub(r"\s+", "", ascii_unit(text).casefold())


def judge(stated: Stated, measurement: Measurement) -> OracleResult:
    """The verdict of one measurement against one stated value (see the module docstring for the rule)."""
    decisive = stated.conditions if measurement.decisive_conditions is None else measurement.decisive_conditions
    matched = {_condition_key(c) for c in measurement.matched_conditions}
    unmatched = [c for c in decisive if _condition_key(c) not in matched]
    if unmatched:
        return OracleResult(Verdict.inconclusive, "decisive condition not matched: " + "; ".join(unmatched),
                            unmatched_conditions=unmatched)

    def in_measurement_unit(number: float | None) -> float | None:
        if number is None:
            return None
        return convert(number, stated.unit, measurement.unit or stated.unit)

    low, typical, high = (in_measurement_unit(x) for x in (stated.min, stated.typical, stated.max))
    tolerance = measurement.tolerance if measurement.tolerance is not None else stated.tolerance
    t = in_measurement_unit(tolerance) if tolerance else 0.0
    converted = (low, typical, high, t)
    given = (stated.min, stated.typical, stated.max, tolerance or 0.0)
    if any(c is None and g is not None for c, g in zip(converted, given, strict=True)):
        return OracleResult(Verdict.inconclusive, f"units not comparable: {stated.unit!r} vs {measurement.unit!r}")
    k = math.hypot(measurement.u, abs(t or 0.0))
    m = measurement.value

    if low is None and high is None:
        if typical is None:
            return OracleResult(Verdict.inconclusive, "nothing stated to compare with")
        gap = abs(m - typical)
        if gap > k:
            return OracleResult(Verdict.failed, f"|m - typ| = {gap:.6g} exceeds √(u²+t²) = {k:.6g}", k, -gap)
        return OracleResult(Verdict.inconclusive, f"|m - typ| = {gap:.6g} within √(u²+t²) = {k:.6g}", k, -gap)

    margins = [x for x in ((m - low) if low is not None else None, (high - m) if high is not None else None)
               if x is not None]
    margin = min(margins)
    if margin > k:
        return OracleResult(Verdict.passed, f"inside the stated limits by {margin:.6g} > √(u²+t²) = {k:.6g}", k, margin)
    if margin < -k:
        return OracleResult(Verdict.failed, f"outside a stated limit by {-margin:.6g} > √(u²+t²) = {k:.6g}", k,
                            margin)
    return OracleResult(Verdict.inconclusive, f"within √(u²+t²) = {k:.6g} of a stated limit (margin {margin:.6g})",
                        k, margin)


class FileOracle:
    """Measurements from a YAML file (schema in the module docstring)."""

    def __init__(self, measurements: list[Measurement], source: str | None = None):
        self.source = source
        self._by_claim: dict[str, Measurement] = {}
        for measurement in measurements:
            if measurement.claim in self._by_claim:
                raise InvalidInput(f"{source or 'measurements'}: two measurements for claim {measurement.claim!r}.",
                                   code="invalid_measurements")
            self._by_claim[measurement.claim] = measurement

    @classmethod
    def load(cls, path: Path) -> FileOracle:
        if not path.is_file():
            raise InvalidInput(f"No measurements file at {path}.", code="measurements_not_found")
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
            items = data.get("measurements") if isinstance(data, dict) else None
            if not isinstance(items, list):
                raise InvalidInput(f"{path}: needs a `measurements` list.", code="invalid_measurements")
            return cls([Measurement.model_validate(item) for item in items], source=str(path))
        except (yaml.YAMLError, ValidationError) as exc:
            raise InvalidInput(f"{path}: {exc}", code="invalid_measurements") from exc

    def measurement_for(self, claim_id: str) -> Measurement | None:
        return self._by_claim.get(claim_id)


# --- Perturbation sweep -----------------------------------------------------------------------------------


@dataclass
class Flip:
    """The verdict changes from ``before`` to ``after`` as the swept bound crosses ``at`` (bisected)."""

    before: str
    after: str
    at: float


@dataclass
class Sweep:
    bound: str
    points: list[tuple[float, str]]
    flips: list[Flip]

    def to_dict(self) -> dict[str, Any]:
        return {"bound": self.bound, "points": [{"bound": b, "verdict": v} for b, v in self.points],
                "flips": [asdict(f) for f in self.flips]}


def perturb(stated: Stated, measurement: Measurement, bound: str, start: float, stop: float, steps: int = 41,
            precision: float | None = None) -> Sweep:
    """Sweep one stated bound (``min``, ``typical`` or ``max``) from ``start`` to ``stop`` through a fixed
    measurement and locate every verdict flip by bisection between neighbouring grid points.

    The verdict function itself is bisected (not a closed form), so a flip is located wherever the rule puts it.
    """
    if bound not in ("min", "typical", "max"):
        raise InvalidInput(f"Unknown bound {bound!r}; use min, typical or max.", code="invalid_bound")
    if steps < 2:
        raise InvalidInput("A sweep needs at least 2 steps.", code="invalid_steps")
    precision = precision or abs(stop - start) * 1e-9 or 1e-12

    def verdict_at(value: float) -> str:
        return judge(_with(stated, bound, value), measurement).verdict.value

    grid = [start + (stop - start) * i / (steps - 1) for i in range(steps)]
    points = [(value, verdict_at(value)) for value in grid]
    flips = []
    for (a, va), (b, vb) in zip(points, points[1:], strict=False):
        if va != vb:
            flips.extend(_bisect(verdict_at, a, va, b, vb, precision))
    return Sweep(bound=bound, points=points, flips=flips)


def _with(stated: Stated, bound: str, value: float) -> Stated:
    return Stated(**{**asdict(stated), bound: value})


def _bisect(verdict_at: Callable[[float], str], a: float, va: str, b: float, vb: str, precision: float) -> list[Flip]:
    """Flips between a and b; when three verdicts share the interval both transitions are found."""
    while abs(b - a) > precision:
        middle = (a + b) / 2
        vm = verdict_at(middle)
        if vm == va:
            a = middle
        elif vm == vb:
            b = middle
        else:
            return [*_bisect(verdict_at, a, va, middle, vm, precision),
                    *_bisect(verdict_at, middle, vm, b, vb, precision)]
    return [Flip(before=va, after=vb, at=(a + b) / 2)]
