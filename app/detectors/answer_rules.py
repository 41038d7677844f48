"""Rules about the answer against the request itself: its dimension, its unit, and the reader's confidence.

They follow the conventions of ``app.detectors.rules`` (name, version, default severity, a sentence, evidence
with ``span_ids``):

* ``expected_dimension`` (warning): no unit was requested, but the parameter's name fixes a dimension
  (``app.detectors.dimensions``); an answer in another dimension, or a dimensional quantity answered with no unit,
  cannot be the parameter asked for as it stands. With a requested unit, a value without one is flagged too. A
  name asking for a temperature coefficient is answered in a share or a unit per temperature, never in the unit
  of the quantity it qualifies (a resistance tempco in kΩ is the resistance).
* ``unit_not_convertible`` (warning): a unit was requested and the answer's unit cannot be read, so the value
  could not be returned in the requested unit (an incompatible one is ``unit_dimension``'s).
* ``low_confidence`` (warning): the offline reader answered below its calibrated floor
  (``app.detectors.calibration``); hosted models' confidences are not calibrated and are not judged.
* ``one_sided_range`` (warning): the name asks for a range (``… range``, an operating or storage temperature) and
  the answer gives one end of it: the other end is printed elsewhere, or the figure is another parameter's limit.
"""

from __future__ import annotations

import re
from typing import Any

from app.config import OFFLINE_MODEL
from app.detectors import plausibility
from app.detectors.calibration import CONFIDENCE_FLOOR, expected_accuracy
from app.detectors.dimensions import (
    changes_per_temperature,
    expected_dimension,
    is_dimensional,
    measures,
    per_temperature,
)
from app.detectors.rules import Context, Rule, Verdict, clean, flag, not_evaluable, submit_span_ids
from app.detectors.severity import Severity

NO_VALUE = "no value was reported"


def _values(ctx: Context) -> list[dict[str, Any]] | None:
    if ctx.submission is None or not ctx.submission.found or not ctx.submission.values:
        return None
    return ctx.submission.values


def _expected_dimension(rule: Rule, ctx: Context) -> Verdict:
    values = _values(ctx)
    if values is None:
        return not_evaluable(rule, NO_VALUE)
    requested = ctx.request.get("unit")
    issues: list[dict[str, Any]] = []
    if requested:
        if not is_dimensional(requested):
            return not_evaluable(rule, "the requested unit is not a physical dimension")
        issues = [{"value_index": i, "problem": "no_unit", "requested_unit": requested}
                  for i, value in enumerate(values) if not (value.get("unit") or "").strip()]
        if not issues:
            return clean(rule)
        sentence = f"the request asks for {requested}, but {len(issues)} value(s) came back without a unit"
    elif per_temperature(ctx.request.get("name")):
        issues = [{"value_index": i, "problem": "no_per_temperature", "unit": value.get("unit")}
                  for i, value in enumerate(values) if changes_per_temperature(value.get("unit")) is False]
        if not issues:
            return clean(rule)
        units = ", ".join(sorted({str(x["unit"]) for x in issues}))
        sentence = (f"“{ctx.request.get('name')}” is a temperature coefficient, but the answer is in {units}, "
                    "the unit of the quantity itself")
    else:
        dimension = expected_dimension(ctx.request.get("name"))
        if dimension is None:
            return not_evaluable(rule, "the parameter's name does not fix a dimension")
        for i, value in enumerate(values):
            unit = (value.get("unit") or "").strip()
            if not unit:
                issues.append({"value_index": i, "problem": "no_unit", "expected": dimension.name})
            elif measures(unit, dimension) is False:
                issues.append({"value_index": i, "problem": "wrong_dimension", "unit": unit,
                               "expected": dimension.name})
        if not issues:
            return clean(rule)
        described = "; ".join(f"value {x['value_index'] + 1} has no unit" if x["problem"] == "no_unit"
                              else f"value {x['value_index'] + 1} is in {x['unit']}" for x in issues)
        sentence = f"“{ctx.request.get('name')}” is a {dimension.name}, but {described}"
    return flag(rule, rule.finding(ctx, f"The answer does not measure what was asked: {sentence}.",
                                   {"span_ids": submit_span_ids(ctx), "issues": issues}))


def _unit_not_convertible(rule: Rule, ctx: Context) -> Verdict:
    values = _values(ctx)
    if values is None:
        return not_evaluable(rule, NO_VALUE)
    requested = ctx.request.get("unit")
    if not requested:
        return not_evaluable(rule, "no unit was requested")
    if plausibility.parse_unit(requested) is None and not plausibility.is_log_unit(requested):
        return not_evaluable(rule, f"the requested unit {requested!r} cannot be read")
    unreadable = [{"value_index": i, "unit": value.get("unit")} for i, value in enumerate(values)
                  if (value.get("unit") or "").strip() and not plausibility.same_unit_text(value.get("unit"), requested)
                  and plausibility.compatible(value.get("unit"), requested) is None]
    if not unreadable:
        return clean(rule)
    units = ", ".join(sorted({str(x["unit"]) for x in unreadable}))
    return flag(rule, rule.finding(
        ctx, f"The answer's unit ({units}) cannot be read, so it was not converted to the requested {requested}: "
             "check the value and its unit on the page.",
        {"span_ids": submit_span_ids(ctx), "values": unreadable, "requested_unit": requested}))


def _low_confidence(rule: Rule, ctx: Context) -> Verdict:
    values = _values(ctx)
    if values is None:
        return not_evaluable(rule, NO_VALUE)
    model = ctx.model or (ctx.record.model if ctx.record else None)
    if model != OFFLINE_MODEL:
        return not_evaluable(rule, "only the offline reader's confidence is calibrated")
    confidence = ctx.submission.confidence if ctx.submission else None
    if confidence is None:
        return not_evaluable(rule, "no confidence was reported")
    floor = float(ctx.settings.option(rule.name, "floor", CONFIDENCE_FLOOR))
    if confidence >= floor:
        return clean(rule)
    return flag(rule, rule.finding(
        ctx, f"The offline reader answered with confidence {confidence:.2f}, below its calibrated floor {floor:.2f}: "
             f"answers this unsure were right {expected_accuracy(confidence):.0%} of the time when measured.",
        {"span_ids": submit_span_ids(ctx), "confidence": confidence, "floor": floor}))


# Names that ask for both ends of a range: "… range" (a dynamic range is one figure in dB), and the operating,
# ambient and storage temperatures, which datasheets always state as a range.
_RANGE_NAME = re.compile(r"(?<!dynamic )\brange\b|\b(?:operating|ambient|storage)\s+(?:free[- ]air\s+)?temperature\b",
                         re.IGNORECASE)


def _one_sided_range(rule: Rule, ctx: Context) -> Verdict:
    values = _values(ctx)
    if values is None:
        return not_evaluable(rule, NO_VALUE)
    name = str(ctx.request.get("name") or "")
    if not _RANGE_NAME.search(name):
        return not_evaluable(rule, "the name does not ask for a range")
    one_sided = [i for i, value in enumerate(values) if (value.get("min") is None) != (value.get("max") is None)]
    if not one_sided:
        return clean(rule)
    value = values[one_sided[0]]
    end = "minimum" if value.get("min") is not None else "maximum"
    return flag(rule, rule.finding(
        ctx, f"“{name}” asks for a range, but the answer gives only its {end}: the other end is printed elsewhere, "
             "or the figure is another parameter's limit.",
        {"span_ids": submit_span_ids(ctx), "value_indexes": one_sided}))


ANSWER_RULES: tuple[Rule, ...] = (
    Rule("expected_dimension", "5", Severity.warning,
         "The answer's unit does not measure the dimension the parameter's name implies, or is missing.",
         _expected_dimension),
    Rule("unit_not_convertible", "1", Severity.warning,
         "A unit was requested and the answer's unit cannot be read to convert it.", _unit_not_convertible),
    Rule("low_confidence", "1", Severity.warning, "The offline reader answered below its calibrated confidence floor.",
         _low_confidence),
    Rule("one_sided_range", "1", Severity.warning, "The name asks for a range and the answer gives one end of it.",
         _one_sided_range),
)
