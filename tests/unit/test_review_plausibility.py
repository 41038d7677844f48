"""Units read with pint, value comparison after normalisation, and the plausibility checks."""

from __future__ import annotations

import pytest

from app.detectors import plausibility as p


@pytest.mark.parametrize(("unit", "expected"), [
    ("µA", "microampere"), ("uA", "microampere"), ("KΩ", "kiloohm"), ("kOhm", "kiloohm"), ("°C", "degree_Celsius"),
    ("℃", "degree_Celsius"), ("V/µs", "volt / microsecond"), ("Vrms", "volt"), ("mcd", "millicandela"),
    ("megapixels", "megapixel"), ("taps", "tap"), ("KHz", "kilohertz"),
])
def test_parse_unit(unit: str, expected: str) -> None:
    assert str(p.parse_unit(unit)) == expected


def test_unreadable_units_are_none_not_guesses() -> None:
    assert p.parse_unit("dB") is None and p.parse_unit("") is None and p.parse_unit("qwzx") is None
    assert p.compatible("dB", "V") is None
    assert p.compatible("mA", "A") is True and p.compatible("mV", "mA") is False


def test_convert_and_agree() -> None:
    assert p.convert(2.5, "µA", "mA") == pytest.approx(0.0025)
    assert p.convert(25, "°C", "K") == pytest.approx(298.15)
    assert p.convert(1, "V", "A") is None
    assert p.values_agree({"min": -40, "max": 125, "unit": "°C"}, {"min": -40, "max": 125, "unit": "degC"})
    assert p.values_agree({"typical": 10, "unit": "kΩ"}, {"typical": 10000, "unit": "ohm"})
    assert p.values_agree({"typical": 10, "unit": "kΩ"}, {"typical": 10, "unit": "mA"}) is False
    assert p.values_agree({"typical": 1.1, "unit": "MHz"}, {"typical": 1.2, "unit": "MHz"}) is False
    assert p.values_agree({"typical": 1.1}, {"max": 1.2}) is None


def test_checks() -> None:
    assert [i.check for i in p.check_value(0, {"min": 5, "typical": 3, "max": 4, "unit": "V"}, "V")] == [
        "ordering", "ordering"]
    assert [i.check for i in p.check_value(0, {"typical": 5, "unit": "mA"}, "V")] == ["unit_dimension"]
    assert [i.check for i in p.check_value(0, {"max": 65535, "unit": "V"}, None)] == ["sentinel"]
    assert p.check_value(0, {"min": -40, "typical": 25, "max": 85, "unit": "°C"}, "degC") == []
    assert p.check_value(0, {"typical": 100, "unit": "dB"}, "dB") == []


def test_negative_limits_ordered_by_magnitude_are_not_an_ordering_error() -> None:
    # A sink current printed -50 / -150 / -300 uA under Min / Typ / Max.
    assert p.check_value(0, {"min": -50, "typical": -150, "max": -300, "unit": "uA"}, "uA") == []
    assert p.check_value(0, {"typical": -1.4, "max": -2.7, "unit": "mV/V"}, None) == []
    # Neither signed nor magnitude order: still flagged; mixed signs are read in signed order only.
    assert [i.check for i in p.check_value(0, {"min": -50, "typical": -300, "max": -150, "unit": "uA"}, None)]
    assert [i.check for i in p.check_value(0, {"min": 5, "max": -6, "unit": "V"}, None)] == ["ordering"]


def test_a_requested_c_or_f_beside_a_temperature_is_a_lost_degree_sign() -> None:
    assert p.check_value(0, {"min": -0.7, "max": 0.7, "unit": "°C"}, "C") == []
    assert p.check_value(0, {"typical": 3.5, "unit": "degF"}, "F") == []
    # A charge or a capacitance answered for a temperature request is still another quantity.
    assert [i.check for i in p.check_value(0, {"typical": 3.5, "unit": "nF"}, "°C")] == ["unit_dimension"]
    assert [i.check for i in p.check_value(0, {"typical": 3.5, "unit": "V"}, "C")] == ["unit_dimension"]


@pytest.mark.parametrize(("unit", "other"), [("mV/\u02daC", "mV/degC"), ("\u02daC", "degC"), ("mNm", "N*m"),
                                             ("Ncm", "N*m"), ("fps", "Hz")])
def test_units_as_datasheets_print_them(unit: str, other: str) -> None:
    assert p.compatible(unit, other) is True


def test_nanometres_stay_lengths() -> None:
    assert p.compatible("nm", "m") is True and p.compatible("Nm", "m") is False


def test_a_measurement_suffix_leaves_the_unit_convertible() -> None:
    assert p.convert(0.35, "PaRMS", "Pa") == 0.35
    assert p.convert(1.0, "Wrms", "mW") == 1000.0
