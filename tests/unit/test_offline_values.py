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
        ("Bias: 0.9 – 1.35 mA", (0.9, None, 1.35, "mA")),
        ("Voltage on SENSE with respect to GND ........ -0.4V to +9.5V", (-0.4, None, 9.5, "V")),
        ("Storage temperature -40 ~ +150 °C", (-40.0, None, 150.0, "degC")),
        ("Case temperature -25 ~ +95 °C", (-25.0, None, 95.0, "degC")),
        ("Temperature coefficient ±50 ppm/°C", (-50.0, None, 50.0, "ppm/degC")),
        ("Offset +/-2.5 mV", (-2.5, None, 2.5, "mV")),
        ("Gain error +/-0.8 %", (-0.8, None, 0.8, "%")),
        ("Latch hold time >450µs", (450.0, None, None, "us")),
        ("Leakage <0.5mA", (None, None, 0.5, "mA")),
        ("Ripple <35mV", (None, None, 35.0, "mV")),
        ("VTrip=3,85V", (None, 3.85, None, "V")),
        ("Frequency response 250–10000 Hz", (250.0, None, 10000.0, "Hz")),
        ("Operating Temperature –40°C ≤ TA ≤ +125°C", (-40.0, None, 125.0, "degC")),
        ("Junction Temperature –20°C ≤ TJ ≤ +105°C", (-20.0, None, 105.0, "degC")),
        ("Undervoltage lockout (2.1V typical)", (None, 2.1, None, "V")),
        ("Output current 25 mA max.", (None, None, 25.0, "mA")),
        ("Input capacitance 12 pF max.", (None, None, 12.0, "pF")),
    ],
)
def test_value_expressions(text: str, expected: tuple) -> None:
    assert _one(text) == expected


@pytest.mark.parametrize(("text", "expected"), [("640ns~1.5µs", (640.0, 1500.0, "ns")),
                                              ("750µs~2ms", (750.0, 2000.0, "us")),
                                              ("300mV~1.2V", (300.0, 1200.0, "mV"))])
def test_range_with_different_prefixes_is_reported_in_the_first_unit(text: str, expected: tuple) -> None:
    reading = read_values(text)[0]
    assert (reading.min, reading.max, reading.unit.canonical) == expected


def test_identifiers_are_not_values() -> None:
    numbers = [r.typical for r in read_values("7120K-4-502B 7120M-1-502B 25,000 .050")]
    assert numbers == [25000.0, 0.05]


@pytest.mark.parametrize(("text", "expected"), [("QX540-16 hFE 90", [90.0]), ("ZR2210-4.7 4.7 V", [4.7]),
                                              ("Drift -16 ppm", [-16.0])])
def test_a_dash_glued_to_a_part_number_starts_its_suffix(text: str, expected: list[float]) -> None:
    assert [r.typical for r in read_values(text)] == expected


def test_unit_printed_once_applies_to_the_figures_before_it() -> None:
    readings = read_values("VS Bridge voltage +/-12 or 24 V")
    assert [(r.kind, r.unit.canonical) for r in readings] == [("pm", "V"), ("single", "V")]


@pytest.mark.parametrize(("text", "value"), [("5,25", 5.25), (".020", 0.02), ("10,000", 10000.0), ("-0.6", -0.6),
                                             ("–40", -40.0), ("VSS", None), ("—", None)])
def test_numbers(text: str, value: float | None) -> None:
    assert parse_number(text) == value


@pytest.mark.parametrize(
    ("token", "canonical", "factor"),
    [("µA", "uA", 1e-6), ("μA", "uA", 1e-6), ("KΩ", "kohm", 1e3), ("Ω", "ohm", 1.0), ("℃", "degC", 1.0),
     ("ºC", "degC", 1.0), ("\u02daC", "degC", 1.0),
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


def test_frequencies_printed_in_capitals_are_read_with_their_prefix() -> None:
    assert parse_unit("KHZ").factor == parse_unit("kHz").factor == 1e3
    assert parse_unit("MHZ").factor == 1e6 and parse_unit("HZ").canonical == "Hz"
    assert parse_unit("mHz").factor == 1e-3  # a lower-case m is still milli


def test_a_volt_printed_in_lower_case_after_a_prefix_is_the_volt() -> None:
    assert parse_unit("mv") == parse_unit("mV")
    assert parse_unit("uv").factor == pytest.approx(1e-6)
    assert parse_unit("v") is None  # a lone letter stays no unit


def test_dash_before_words_is_not_a_bound() -> None:
    assert _one("22 kΩ – Bias Resistance") == (None, 22.0, None, "kohm")
    assert _one("Enable input -0.5V～VCC+0.3") == (-0.5, None, None, "V")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # A dot leader ends right at the number; the number is still a value.
        ("Package dissipation ..........650 mW", (None, 650.0, None, "mW")),
        ("Heater dissipation ......1.8 W", (None, 1.8, None, "W")),
        # A leader of ellipsis characters run into dots, and a full-width minus sign.
        ("Peak die temperature…...135℃", (None, 135.0, None, "degC")),
        ("Bias pin voltage……………－0.5V to 7.5V", (-0.5, None, 7.5, "V")),
        ("Ambient range…...－25℃ to 70℃", (-25.0, None, 70.0, "degC")),
        # Units written out as words in rating lists.
        ("Isolation Resistance (250 VDC) ....5,000 megohms minimum", (5000.0, None, None, "Mohm")),
        ("Load rating at +55 °C ........3 watts", (None, 3.0, None, "W")),
        # The limit word after the same value restated in other units.
        ("Holding force ....0.8 N-cm (oz.-in.) maximum", (None, None, 0.8, "N.cm")),
        ("Thermal resistance θJC 37.5 °C/W", (None, 37.5, None, "degC/W")),
        ("Max. exhaust flow 92.4 m³/h", (None, 92.4, None, "m3/h")),
    ],
)
def test_rating_list_values(text: str, expected: tuple) -> None:
    last = [r for r in read_values(text) if r.unit is not None][-1]
    assert (last.min, last.typical, last.max, last.unit.canonical) == expected


def test_footnote_references_are_not_values() -> None:
    for text, value, unit in [("Package dissipation (Note 3) ..........650 mW", 650.0, "mW"),
                              ("Input current (Note 12) .... 40 mA", 40.0, "mA")]:
        readings = read_values(text)
        assert [(r.typical, r.unit.canonical if r.unit else None) for r in readings] == [(value, unit)]


def test_word_units_and_thermal_units_have_dimensions() -> None:
    assert parse_unit("megohms").factor == 1e6
    assert parse_unit("°C/W").dimension == parse_unit("K/W").dimension
    assert parse_unit("mmH20").canonical == "mmH2O"
    assert parse_unit("m³/h").canonical == "m3/h"


def test_limit_word_after_a_restatement_in_other_units() -> None:
    first = read_values("Holding force ....0.8 N-cm (1.1 oz.-in.) maximum (sealed)")[0]
    assert (first.typical, first.max, first.unit.canonical) == (None, 0.8, "N.cm")


def test_counts_and_durations_written_as_words_are_units() -> None:
    assert _one("Warranty 5 years") == (None, 5.0, None, "years")
    assert _one("Guarantee: 1 year") == (None, 1.0, None, "years")
    assert _one("Endurance 100,000 cycles") == (None, 100000.0, None, "cycles")
    assert parse_unit("years").dimension == parse_unit("hours").dimension == parse_unit("ms").dimension
    assert parse_unit("sec").dimension == parse_unit("s").dimension
    assert parse_unit("revolutions").dimension != parse_unit("cycles").dimension


def test_a_prefix_spaced_from_bytes_is_part_of_the_unit() -> None:
    assert _one("32k bytes EEPROM") == (None, 32.0, None, "kbytes")
    assert _one("4k bytes of scratch RAM") == (None, 4.0, None, "kbytes")
    assert parse_unit("k bytes").factor == parse_unit("kB").factor


def test_a_resistance_prefix_spaced_from_ohm_is_part_of_the_unit() -> None:
    assert _one("a bleeder of 3.9K Ohm or larger") == (None, 3.9, None, "kohm")
    assert _one("6.8 k ohms") == (None, 6.8, None, "kohm")


@pytest.mark.parametrize(("text", "low", "high"), [
    ("VIO.....................- 0.5V to + 5.5V", -0.5, 5.5),
    ("Supply voltages VDD .... - 0.3V to + 3.6V", -0.3, 3.6),
    ("VI.................................. - 0.3V to 5.25V", -0.3, 5.25),
])
def test_a_sign_printed_apart_from_its_number_is_its_sign(text: str, low: float, high: float) -> None:
    reading = read_values(text)[0]
    assert (reading.kind, reading.min, reading.max) == ("range", low, high)
    assert reading.text in text  # still the printed text


def test_a_dash_between_two_numbers_or_after_a_colon_stays_no_sign() -> None:
    assert [r.typical for r in read_values("5 - 3 V")] == [5.0, 3.0]
    assert [r.typical for r in read_values("Wide bandwidth: - 2 MHz (typical)")] == [2.0]


def test_a_single_ellipsis_between_numbers_is_still_a_range_and_a_full_width_sign_is_quoted_as_printed() -> None:
    (span,) = read_values("Trim span 2…9 V")
    assert (span.min, span.max) == (2.0, 9.0)
    (rail,) = read_values("Bias pin voltage……－0.5V to 7.5V")
    assert rail.text == "－0.5V to 7.5V"
