"""Value expressions and units as datasheets print them."""

from __future__ import annotations

import pytest

from app.agent.offline.values import parse_number, read_values
from app.units import parse_unit


def _one(text: str):
    readings = read_values(text)
    assert len(readings) == 1, [r.text for r in readings]
    reading = readings[0]
    return reading.min, reading.typical, reading.max, reading.unit.canonical if reading.unit else None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Supply voltage: 1.7 – 3.6 V", (1.7, None, 3.6, "V")),
        ("Voltage on VDD with respect to VSS ........ -0.6V to +7.0V", (-0.6, None, 7.0, "V")),
        ("Storage temperature -40 ~ +150 °C", (-40.0, None, 150.0, "degC")),
        ("Temperature coefficient ±50 ppm/°C", (-50.0, None, 50.0, "ppm/degC")),
        ("Offset +/-2.5 mV", (-2.5, None, 2.5, "mV")),
        ("RES low voltage time >280µs", (280.0, None, None, "us")),
        ("Leakage <0.5mA", (None, None, 0.5, "mA")),
        ("VMax=5,25V", (None, 5.25, None, "V")),
        ("Frequency response 250–10000 Hz", (250.0, None, 10000.0, "Hz")),
        ("Operating Temperature –40°C ≤ TA ≤ +125°C", (-40.0, None, 125.0, "degC")),
        ("Brown-out reset protection (1.5V typical)", (None, 1.5, None, "V")),
        ("Output current 25 mA max.", (None, None, 25.0, "mA")),
    ],
)
def test_value_expressions(text: str, expected: tuple) -> None:
    assert _one(text) == expected


def test_range_with_different_prefixes_is_reported_in_the_first_unit() -> None:
    reading = read_values("580ns~1µs")[0]
    assert (reading.min, reading.max, reading.unit.canonical) == (580.0, 1000.0, "ns")


def test_identifiers_are_not_values() -> None:
    numbers = [r.typical for r in read_values("3590P-2-103L 3590S-1-103L 10,000 .020")]
    assert numbers == [10000.0, 0.02]


def test_unit_printed_once_applies_to_the_figures_before_it() -> None:
    readings = read_values("VCC Supply voltage +/-16 or 32 V")
    assert [(r.kind, r.unit.canonical) for r in readings] == [("pm", "V"), ("single", "V")]


@pytest.mark.parametrize(("text", "value"), [("5,25", 5.25), (".020", 0.02), ("10,000", 10000.0), ("-0.6", -0.6),
                                             ("–40", -40.0), ("VSS", None), ("—", None)])
def test_numbers(text: str, value: float | None) -> None:
    assert parse_number(text) == value


@pytest.mark.parametrize(
    ("token", "canonical", "factor"),
    [("µA", "uA", 1e-6), ("μA", "uA", 1e-6), ("KΩ", "kohm", 1e3), ("Ω", "ohm", 1.0), ("℃", "degC", 1.0),
     ("MHz", "MHz", 1e6), ("V/µs", "V/us", 1e6), ("Kbps", "Kbps", 1e3), ("Taps", "taps", 1.0), ("%", "%", 0.01)],
)
def test_units(token: str, canonical: str, factor: float) -> None:
    unit = parse_unit(token)
    assert unit is not None and unit.canonical == canonical
    assert unit.factor == pytest.approx(factor)


def test_unit_dimensions_tell_quantities_apart() -> None:
    assert parse_unit("mA").dimension == parse_unit("uA").dimension
    assert parse_unit("mA").dimension != parse_unit("mV").dimension
    assert parse_unit("VDD") is None and parse_unit("Note") is None


def test_dash_before_words_is_not_a_bound() -> None:
    assert _one("10 kΩ – Nominal Resistance") == (None, 10.0, None, "kohm")
    assert _one("Logical input -0.3V～VDD+0.7") == (-0.3, None, None, "V")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # A dot leader ends right at the number; the number is still a value.
        ("Total power dissipation ..........400 mW", (None, 400.0, None, "mW")),
        # Units written out as words in rating lists.
        ("Insulation Resistance (500 VDC) ....1,000 megohms minimum", (1000.0, None, None, "Mohm")),
        ("Power rating at +40 °C ........2 watts", (None, 2.0, None, "W")),
        # The limit word after the same value restated in other units.
        ("Torque ....0.35 N-cm (oz.-in.) maximum", (None, None, 0.35, "N.cm")),
        ("Thermal resistance θJA 149.5 °C/W", (None, 149.5, None, "degC/W")),
        ("Max. airflow 186.7 m³/h", (None, 186.7, None, "m3/h")),
    ],
)
def test_rating_list_values(text: str, expected: tuple) -> None:
    last = [r for r in read_values(text) if r.unit is not None][-1]
    assert (last.min, last.typical, last.max, last.unit.canonical) == expected


def test_footnote_references_are_not_values() -> None:
    readings = read_values("Total power dissipation (Note 1) ..........400 mW")
    assert [(r.typical, r.unit.canonical if r.unit else None) for r in readings] == [(400.0, "mW")]


def test_word_units_and_thermal_units_have_dimensions() -> None:
    assert parse_unit("megohms").factor == 1e6
    assert parse_unit("°C/W").dimension == parse_unit("K/W").dimension
    assert parse_unit("mmH20").canonical == "mmH2O"
    assert parse_unit("m³/h").canonical == "m3/h"


def test_limit_word_after_a_restatement_in_other_units() -> None:
    first = read_values("Torque ....0.35 N-cm (0.5 oz.-in.) maximum (unsealed)")[0]
    assert (first.typical, first.max, first.unit.canonical) == (None, 0.35, "N.cm")


def test_counts_and_durations_written_as_words_are_units() -> None:
    assert _one("Warranty 5 years") == (None, 5.0, None, "years")
    assert _one("Guarantee: 1 year") == (None, 1.0, None, "years")
    assert _one("Endurance 100,000 cycles") == (None, 100000.0, None, "cycles")
    assert parse_unit("years").dimension == parse_unit("hours").dimension == "time"
    assert parse_unit("revolutions").dimension != parse_unit("cycles").dimension


def test_a_prefix_spaced_from_bytes_is_part_of_the_unit() -> None:
    assert _one("8k bytes Internal SRAM") == (None, 8.0, None, "kbytes")
    assert parse_unit("k bytes").factor == parse_unit("kB").factor


def test_a_resistance_prefix_spaced_from_ohm_is_part_of_the_unit() -> None:
    assert _one("a resistor of 2.7K Ohm or larger") == (None, 2.7, None, "kohm")
    assert _one("4.7 k ohms") == (None, 4.7, None, "kohm")
