"""Rules that read the answer against the request: dimension from the name, requested units, calibrated
confidence; and the conversion of answers to the requested unit."""

from __future__ import annotations

from typing import Any

import pytest

from app.config import OFFLINE_MODEL
from app.detectors.answer_rules import ANSWER_RULES
from app.detectors.dimensions import expected_dimension, printed, to_requested
from app.detectors.record import Submission
from app.detectors.rules import Context, evaluate


def verdicts(values: list[dict[str, Any]], request: dict[str, Any], *, confidence: float = 0.9,
             model: str | None = "hosted/model") -> dict[str, Any]:
    submission = Submission(found=True, values=values, quote="q", pages=[1], confidence=confidence)
    return {v.rule: v for v in evaluate(Context(record=None, submission=submission, request=request, model=model),
                                         ANSWER_RULES)}


@pytest.mark.parametrize(("name", "dimension"), [
    ("Standby current", "current"), ("RAB resistance", "resistance"), ("Output impedance", "resistance"),
    ("Propagation delay", "time"), ("Clock period", "time"), ("Bandwidth", "frequency"),
    ("Operating temperature", "temperature"), ("Holding torque", "torque"), ("Power rating", "power"),
    ("Input capacitance", "capacitance"), ("Junction-to-ambient thermal resistance", "thermal resistance"),
    ("Case-to-sink thermal impedance", "thermal resistance"), ("Pulse duration", "time"),
    ("Operation voltage", "voltage"), ("Calibration time", "time"),
    ("Dielectric withstanding voltage", "voltage"), ("Relative pressure", "pressure"),
])
def test_dimension_is_inferred_from_the_parameter_name(name: str, dimension: str) -> None:
    inferred = expected_dimension(name)
    assert inferred is not None and inferred.name == dimension


@pytest.mark.parametrize("name", ["Voltage gain", "Temperature coefficient of resistance", "Resistance tolerance",
                                  "Power supply rejection ratio", "Noise density", "Duty cycle", "Resolution",
                                  "Number of taps", "Slew rate"])
def test_ratios_tolerances_and_counts_fix_no_dimension(name: str) -> None:
    assert expected_dimension(name) is None


def test_wrong_dimension_or_missing_unit_is_flagged_when_no_unit_was_requested() -> None:
    assert verdicts([{"typical": 450, "unit": "V"}], {"name": "Power rating"})["expected_dimension"].findings
    amperes = verdicts([{"typical": 10, "unit": "A"}], {"name": "Nominal resistance"})["expected_dimension"]
    assert amperes.findings[0].evidence["issues"][0]["problem"] == "wrong_dimension"
    bare = verdicts([{"typical": 301}], {"name": "Dielectric withstanding voltage"})["expected_dimension"]
    assert bare.findings[0].evidence["issues"][0]["problem"] == "no_unit"
    mixed = verdicts([{"typical": 2, "unit": "W"}, {"max": 4.5, "unit": "kΩ"}], {"name": "Power rating"})
    assert [i["value_index"] for i in mixed["expected_dimension"].findings[0].evidence["issues"]] == [1]
    assert not verdicts([{"typical": 2, "unit": "W"}], {"name": "Power rating"})["expected_dimension"].findings
    assert not verdicts([{"typical": 85, "unit": "°C"}], {"name": "Max temperature"})["expected_dimension"].findings
    ratio = verdicts([{"typical": 20}], {"name": "Resistance tolerance"})["expected_dimension"]
    assert not ratio.evaluable


def test_a_requested_dimensional_unit_needs_a_unit_in_the_answer() -> None:
    dropped = verdicts([{"min": 1.8, "max": 3.6}], {"name": "Supply", "unit": "V"})["expected_dimension"]
    assert dropped.findings and dropped.findings[0].evidence["issues"][0]["requested_unit"] == "V"
    assert not verdicts([{"min": 1.8, "unit": "V"}], {"name": "Supply", "unit": "V"})["expected_dimension"].findings


@pytest.mark.parametrize("unit", ["dB/V", "%/dB", "dBm/Hz"])
def test_a_requested_unit_compounding_a_logarithmic_one_is_read_without_failing(unit: str) -> None:
    # pint parses "dB/V" and only fails once asked for its dimension: the rules must still run.
    found = verdicts([{"typical": 3.0, "unit": unit}], {"name": "Gain slope", "unit": unit})
    assert not found["expected_dimension"].findings and not found["unit_not_convertible"].findings


def test_values_are_converted_to_the_requested_unit_keeping_what_was_printed() -> None:
    value = {"typical": 450, "max": 600, "unit": "µA", "conditions": ["mode B"]}
    converted = to_requested(value, "mA")
    assert (converted["typical"], converted["max"], converted["unit"]) == (0.45, 0.6, "mA")
    assert converted["printed"] == {"typical": 450, "max": 600, "unit": "µA"}
    assert printed(converted) == {**converted, "min": None, "typical": 450, "max": 600, "unit": "µA"}
    assert to_requested({"typical": 6, "unit": "Pa"}, "hPa")["typical"] == 0.06  # no binary noise
    assert to_requested(value, "V") == value  # not convertible: left as reported (unit_dimension flags it)
    assert to_requested(value, None) is value and to_requested(value, "uA") is value  # same unit, spelt otherwise


def test_an_unreadable_unit_cannot_be_converted_and_is_flagged() -> None:
    flagged = verdicts([{"typical": 3, "unit": "blorps"}], {"name": "Supply current", "unit": "mA"})
    assert flagged["unit_not_convertible"].findings
    assert not verdicts([{"typical": 3, "unit": "uA"}], {"name": "x", "unit": "mA"})["unit_not_convertible"].findings


def test_low_confidence_is_judged_for_the_offline_reader_only() -> None:
    low = verdicts([{"typical": 1, "unit": "V"}], {"name": "x"}, confidence=0.2, model=OFFLINE_MODEL)
    assert low["low_confidence"].findings and low["low_confidence"].findings[0].evidence["floor"] == 0.3
    sure = verdicts([{"typical": 1, "unit": "V"}], {"name": "x"}, confidence=0.6, model=OFFLINE_MODEL)
    assert sure["low_confidence"].evaluable and not sure["low_confidence"].findings
    hosted = verdicts([{"typical": 1, "unit": "V"}], {"name": "x"}, confidence=0.2)
    assert not hosted["low_confidence"].evaluable


@pytest.mark.parametrize(("name", "dimension"), [
    # The quantity is the word the name's head phrase ends on, before its conditions and qualifiers.
    ("Shutdown mode bias current", "current"), ("Humidity conversion time (fast mode)", "time"),
    ("Clamp voltage over temperature for the XR10B", "voltage"), ("EN pin current over temperature", "current"),
    ("Current monitor voltage", "voltage"), ("Bias current IB max (all channels)", "current"),
    ("Common-mode voltage range", "voltage"), ("Mass including cable", "mass"),
    ("Wake-up delay tWK at 1.8 V", "time"),
])
def test_the_dimension_is_the_one_the_names_head_ends_on(name: str, dimension: str) -> None:
    inferred = expected_dimension(name)
    assert inferred is not None and inferred.name == dimension


@pytest.mark.parametrize("name", ["Humidity conversion rate", "VIO bypass capacitor", "Back-EMF constant",
                                  "Gain match between the two channels", "Burst capture speed",
                                  "DOUT hold after CLK falling edge at VIO 1.7 V"])
def test_a_name_whose_head_is_no_known_quantity_fixes_no_dimension(name: str) -> None:
    assert expected_dimension(name) is None


def test_an_answer_in_the_quantity_of_the_names_head_is_clean() -> None:
    assert not verdicts([{"typical": 350, "unit": "nA"}], {"name": "Shutdown mode bias current"})[
        "expected_dimension"].findings
    assert not verdicts([{"typical": 3.2, "unit": "mNm"}], {"name": "Stall torque (5V model)"})[
        "expected_dimension"].findings
    # Still flagged: the head's quantity in another dimension.
    assert verdicts([{"typical": 12.5, "unit": "V"}], {"name": "Humidity conversion time"})[
        "expected_dimension"].findings


def test_a_temperature_coefficient_in_the_unit_of_its_quantity_is_flagged() -> None:
    [finding] = verdicts([{"min": 8, "typical": 10, "max": 12, "unit": "kohm"}],
                         {"name": "Trim resistance tempco"})["expected_dimension"].findings
    assert finding.evidence["issues"][0]["problem"] == "no_per_temperature"
    assert verdicts([{"typical": 2.5, "unit": "mV"}], {"name": "Temperature coefficient of bias voltage"})[
        "expected_dimension"].findings


@pytest.mark.parametrize("unit", ["ppm/degC", "%/°C", "mV/K", "ppm", "%"])
def test_a_temperature_coefficient_per_degree_or_as_a_share_is_clean(unit: str) -> None:
    result = verdicts([{"typical": 35, "unit": unit}], {"name": "Trim resistance tempco"})["expected_dimension"]
    assert result.evaluable and not result.findings


@pytest.mark.parametrize("name", ["Supply voltage range", "Operating temperature", "Storage temperature"])
def test_a_range_answered_with_one_end_is_flagged(name: str) -> None:
    one_end = verdicts([{"max": 85.0, "unit": "degC"}], {"name": name})["one_sided_range"]
    assert one_end.findings and "maximum" in one_end.findings[0].message
    assert not verdicts([{"min": -40.0, "max": 85.0, "unit": "degC"}], {"name": name})["one_sided_range"].findings


def test_a_dynamic_range_or_a_single_rating_is_no_range() -> None:
    assert not verdicts([{"typical": 90.0, "unit": "dB"}], {"name": "Dynamic range"})["one_sided_range"].findings
    assert not verdicts([{"max": 150.0, "unit": "degC"}], {"name": "Junction temperature"})["one_sided_range"].findings
