"""The reader answers one variant of a parameter and reports its siblings (other conditions, pin configurations,
parts) as ``other_variants``, drawn as PDFs and read through the real index, table tool and reader."""

from __future__ import annotations

from pathlib import Path

from tests.support.synthetic_datasheets import ask_reader, draw_page, index_of

GAIN_TABLE = (
    ("Parameter", "Symbol", "Conditions", "Min", "Typ", "Max", "Unit"),
    ("Voltage gain", "AV", "Pins 2-3 bridged", "", "26", "", "dB"),
    ("", "", "Pins 2-3 open", "", "46", "", "dB"),
    ("Quiescent drain", "IQ", "No load", "", "4", "8", "mA"),
)


def _fields(value: dict) -> tuple:
    return value["min"], value["typical"], value["max"], value["unit"]


def test_the_first_variant_is_answered_and_the_other_reported(tmp_path: Path) -> None:
    index = index_of(draw_page(tmp_path / "amp.pdf", (), (GAIN_TABLE,)))
    answer = ask_reader(index, "Voltage gain", "dB")
    assert answer["found"] is True, answer["reason"]
    value = answer["values"][0]
    assert _fields(value) == (None, 26.0, None, "dB")
    assert [(v["label"], v["typical"], v["unit"]) for v in value["other_variants"]] == [("Pins 2-3 open", 46.0, "dB")]


def test_the_requested_variant_is_answered_and_the_first_reported(tmp_path: Path) -> None:
    index = index_of(draw_page(tmp_path / "amp.pdf", (), (GAIN_TABLE,)))
    answer = ask_reader(index, "Voltage gain", "dB", ("Pins 2-3 open",))
    assert answer["found"] is True, answer["reason"]
    value = answer["values"][0]
    assert _fields(value) == (None, 46.0, None, "dB")
    assert [(v["label"], v["typical"]) for v in value["other_variants"]] == [("Pins 2-3 bridged", 26.0)]


def test_a_row_without_siblings_reports_no_variant(tmp_path: Path) -> None:
    index = index_of(draw_page(tmp_path / "amp.pdf", (), (GAIN_TABLE,)))
    answer = ask_reader(index, "Quiescent drain", "mA")
    assert answer["found"] is True, answer["reason"]
    assert _fields(answer["values"][0]) == (None, 4.0, 8.0, "mA")
    assert answer["values"][0]["other_variants"] == []


PART_RATINGS = (
    ("Rating", "Symbol", "Value", "Unit"),
    ("Peak blocking voltage (Gate open) QT58B2", "VBK", "150", "V"),
    ("QT58B5", "", "350", "V"),
    ("QT58B9", "", "550", "V"),
)


def test_a_part_printed_alone_under_a_named_rating_is_that_ratings_row_for_the_part(tmp_path: Path) -> None:
    index = index_of(draw_page(tmp_path / "triac.pdf", (), (PART_RATINGS,), ("Maximum ratings",)))
    answer = ask_reader(index, "Peak blocking voltage", "V", ("QT58B9",))
    assert answer["found"] is True, answer["reason"]
    assert _fields(answer["values"][0]) == (None, None, 550.0, "V")


def test_part_sub_rows_are_not_guessed_between_when_no_part_is_requested(tmp_path: Path) -> None:
    index = index_of(draw_page(tmp_path / "triac.pdf", (), (PART_RATINGS,), ("Maximum ratings",)))
    answer = ask_reader(index, "Peak blocking voltage", "V")
    assert answer["found"] is False
