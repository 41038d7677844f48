"""Grading one extraction against one claim: strict numbers with units, lenient needles, ±, conditions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from evaluation.claims import Claim, load_claims
from evaluation.grading import grade, needle_tokens, permutation_control
from evaluation.units import convert, number_tokens


def claim(**fields: Any) -> Claim:
    base = {"id": "doc-x", "document": "doc", "parameter": "Supply current"}
    return Claim.model_validate({**base, **fields})


def answer(*values: dict[str, Any], confidence: float = 0.9, page: int | None = 4) -> dict[str, Any]:
    return {"found": True, "values": list(values), "source_page": page, "quote": "q", "confidence": confidence}


def test_exact_compares_numbers_after_unit_normalisation() -> None:
    gold = claim(kind="max", typical=2.5, max=5, unit="uA", needles=["2.5", "5", "µA"])
    for value in ({"typical": 2.5, "max": 5, "unit": "µA"},
                  {"typical": 0.0025, "max": 0.005, "unit": "mA"},
                  {"typical": 2500, "max": 5000, "unit": "nA"},
                  {"typical": 2.5, "max": 5.0, "unit": "μA"}):
        assert grade(gold, answer(value)).exact, value
    wrong_unit = grade(gold, answer({"typical": 2.5, "max": 5, "unit": "mA"}))
    assert not wrong_unit.exact and wrong_unit.fields == {"typical": "mismatch", "max": "mismatch"}
    wrong_dimension = grade(gold, answer({"typical": 2.5, "max": 5, "unit": "V"}))
    assert not wrong_dimension.exact and set(wrong_dimension.fields.values()) == {"unit_mismatch"}
    no_unit = grade(gold, answer({"typical": 2.5, "max": 5}))
    assert not no_unit.exact and set(no_unit.fields.values()) == {"unit_missing"}


def test_every_stated_field_must_match_and_extra_fields_are_not_penalised() -> None:
    gold = claim(kind="range", min=2.7, max=5.5, unit="V")
    assert grade(gold, answer({"min": 2.7, "typical": 3.3, "max": 5.5, "unit": "V"})).exact
    partial = grade(gold, answer({"min": 2.7, "unit": "V"}))
    assert not partial.exact and partial.fields == {"min": "match", "max": "missing"}
    # One of several values may carry the answer.
    assert grade(gold, answer({"max": 7.0, "unit": "V"}, {"min": 2.7, "max": 5.5, "unit": "V"})).matched_value == 1


def test_needles_are_lenient_where_exact_is_not() -> None:
    # The study's example: the needle "1" is a substring of "1.7".
    gold = claim(kind="typical", typical=1, unit="A", needles=["1"])
    loose = grade(gold, answer({"typical": 1.7, "unit": "A"}))
    assert loose.fidelity and not loose.exact
    # The right number in the wrong field passes the needles but not the exact check.
    gold = claim(kind="max", max=160, unit="ohm", needles=["160", "Ω"])
    misplaced = grade(gold, answer({"typical": 160, "unit": "Ω"}))
    assert misplaced.fidelity and not misplaced.exact


@pytest.mark.parametrize(("needle", "tokens"), [
    ("+125", ["125"]), (".020", ["0.02"]), ("5,25V", ["5.25", "v"]), ("±50", ["50"]), ("3 to 30", ["3", "30"]),
    ("280µs", ["280", "us"]), ("10,000", ["10000"]), ("-0.6V", ["-0.6", "v"]), (">99.98", ["99.98"]),
    ("ppm/°C", ["ppm/degc"]), ("kΩ", ["kohm"]), ("2.7-5.5", ["2.7", "5.5"]),
])
def test_needle_tokens_follow_printed_conventions(needle: str, tokens: list[str]) -> None:
    assert needle_tokens(needle) == tokens


def test_plus_minus_limit_accepts_the_symmetric_and_the_magnitude_readings() -> None:
    printed = "Temperature Coefficient ±50 ppm/°C maximum/unit"
    as_max = claim(kind="max", max=50, unit="ppm/degC", needles=["±50", "ppm/°C"], source_text=printed)
    as_range = claim(kind="range", min=-50, max=50, unit="ppm/degC", needles=["±50"], source_text=printed)
    as_typical = claim(kind="typical", typical=50, unit="ppm/degC", needles=["±50"], source_text=printed)
    symmetric = answer({"min": -50, "max": 50, "unit": "ppm/°C"})
    magnitude = answer({"max": 50, "unit": "ppm/°C"})
    for gold in (as_max, as_range, as_typical):
        assert grade(gold, symmetric).exact and grade(gold, magnitude).exact
        assert not grade(gold, answer({"min": -50, "max": 40, "unit": "ppm/°C"})).exact
    # Without a printed ± neither reading stands in for the stated fields.
    plain_range = claim(kind="range", min=-50, max=50, unit="mA", needles=["50"], source_text="-50 to 50 mA")
    assert not grade(plain_range, answer({"max": 50, "unit": "mA"})).exact
    plain_typical = claim(kind="typical", typical=50, unit="mA", needles=["50"], source_text="Output 50 mA")
    assert not grade(plain_typical, answer({"min": -50, "max": 50, "unit": "mA"})).exact


def test_abstentions_errors_and_the_confidence_floor_never_pass() -> None:
    gold = claim(kind="typical", typical=4, unit="mA", needles=["4", "mA"])
    assert not grade(gold, None).found
    assert not grade(gold, {"found": False, "values": [], "reason": "absent"}).exact
    confident = answer({"typical": 4, "unit": "mA"}, confidence=0.9)
    assert grade(gold, confident, confidence_floor=0.5).exact
    unsure = grade(gold, answer({"typical": 4, "unit": "mA"}, confidence=0.3), confidence_floor=0.5)
    assert unsure.below_confidence_floor and not unsure.exact and not unsure.fidelity


def test_conditions_and_page_are_secondary_checks() -> None:
    gold = claim(kind="typical", typical=4, unit="mA", conditions=["Vss=6V", "VIN=0", "Ta=25°C"], page=3)
    result = grade(gold, answer({"typical": 4, "unit": "mA", "conditions": ["VSS = 6 V", "vin=0"]}, page=3))
    # "VSS = 6 V" differs from "Vss=6V" only in case and spacing, "vin=0" from "VIN=0" in case; Ta is missing.
    assert result.exact and result.conditions == pytest.approx(2 / 3) and result.page_match is True
    result = grade(gold, answer({"typical": 4, "unit": "mA", "conditions": ["Vss = 6V", "VIN = 0", "Ta = 25 °C"]},
                                page=5))
    assert result.conditions == pytest.approx(1.0) and result.page_match is False


def test_units_convert_with_offsets_compounds_and_capital_kilo() -> None:
    assert convert(-40, "°C", "degC") == -40
    assert convert(32, "degF", "degC") == pytest.approx(0, abs=1e-9)
    assert convert(0.6, "V/µs", "V/us") == pytest.approx(0.6)
    assert convert(50, "ppm/°C", "ppm/degC") == pytest.approx(50)
    assert convert(10, "KΩ", "kohm") == pytest.approx(10)
    assert convert(800, "Kbps", "kbps") == pytest.approx(800)
    assert convert(257, "Taps", "taps") == 257
    assert convert(100, "dB", "dB") == 100 and convert(100, "dB", "V") is None
    assert [t[2] for t in number_tokens("VDD = 2.7V to 5.5V, -40 to +85 °C")] == ["2.7", "5.5", "-40", "85"]


def test_units_as_datasheets_print_them_flat_or_in_words() -> None:
    assert convert(73.5, "m³/h", "m3/h") == pytest.approx(73.5)
    assert convert(2, "cm2", "mm2") == pytest.approx(200)
    assert convert(1, "mmH2O", "Pa") == pytest.approx(9.80665)  # the 2 of H2O is no exponent
    assert convert(100, "megohms", "Mohm") == pytest.approx(100)
    assert convert(100, "Megohms", "MΩ") == pytest.approx(100)
    assert convert(4.7, "kilohms", "kΩ") == pytest.approx(4.7)
    assert convert(1, "CFM", "m3/h") == pytest.approx(1.699, rel=1e-3)
    assert convert(1, "MW", "mW") == pytest.approx(1e9)  # case still matters for symbols


def test_a_c_or_f_beside_a_temperature_is_a_temperature_that_lost_its_degree_sign() -> None:
    assert convert(0.75, "°C", "C") == pytest.approx(0.75)
    assert convert(-20, "C", "degC") == pytest.approx(-20)
    assert convert(50, "F", "degC") == pytest.approx(10)
    assert convert(3, "nC", "C") == pytest.approx(3e-9)  # beside a charge, C stays coulombs
    assert convert(1, "C", "V") is None


def test_every_gold_claim_passes_against_its_own_values_and_fails_when_nudged(claims_file: Path) -> None:
    gold = load_claims(claims_file)
    assert len(gold.claims) >= 40
    for item in gold.claims:
        own = {**item.stated_fields, "unit": item.unit, "conditions": item.conditions}
        verdict = grade(item, answer(own, page=item.page))
        assert verdict.exact and verdict.fidelity and verdict.page_match, item.id
        if item.conditions:
            assert verdict.conditions == 1.0, item.id
        nudged = {**{k: v * 1.01 + 0.01 for k, v in item.stated_fields.items()}, "unit": item.unit}
        assert not grade(item, answer(nudged)).exact, item.id


def test_permutation_control_counts_chance_passes() -> None:
    volts = claim(id="a-supply", document="a", kind="range", min=2.7, max=5.5, unit="V", needles=["2.7", "5.5", "V"])
    same_numbers = claim(id="a-other", document="a", parameter="Other", kind="range", min=2.7, max=5.5, unit="V",
                         needles=["2.7", "V"])
    current = claim(id="b-current", document="b", kind="typical", typical=1, unit="A", needles=["1"])
    extractions = [
        ("a-supply", answer({"min": 2.7, "max": 5.5, "unit": "V"})),
        ("b-current", answer({"typical": 1.5, "unit": "A"})),
        ("a-other", None),  # an engine error contributes no pair
    ]
    result = permutation_control([volts, same_numbers, current], extractions).to_dict()
    # a-supply's extraction is graded for a-other and b-current; b-current's for a-supply and a-other.
    assert result["pairs"] == 4
    assert result["exact_passes"] == 1  # a-other has the very same numbers
    # Needles pass once too: a-other's on a-supply's answer. b-current's needle "1" would be found in "1.5", but
    # that answer is b-current's own; in a-supply's values ("2.7 5.5 v") there is no "1".
    assert result["fidelity_passes"] == 1
    assert result["same_document_pairs"] == 1 and result["same_document_exact_passes"] == 1
    assert result["exact_rate"] == pytest.approx(0.25)


def test_a_unit_that_says_what_it_measures_grades_against_the_unit_alone() -> None:
    # Claim files write "Pa" for a figure printed "0.06 PaRMS"; an RMS figure is still not a peak-to-peak one.
    assert convert(0.06, "PaRMS", "Pa") == 0.06
    assert convert(2.0, "mVpp", "V") == 0.002
    assert convert(1.0, "Vrms", "Vpp") is None
