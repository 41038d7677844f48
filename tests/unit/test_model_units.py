"""Units outside the reader's own vocabulary: unit cells through the table model, unit symbols after numbers."""

from __future__ import annotations

import pytest

from app.agent.offline.model_units import reader_unit, unit_after_number
from app.agent.offline.values import read_values
from app.documents.cell_units import parse_unit_cell


def test_a_measurement_suffix_and_an_unmodelled_compound_stay_as_printed() -> None:
    rms = reader_unit(parse_unit_cell("PaRMS"))
    assert (rms.canonical, rms.factor) == ("PaRMS", 1.0)
    peak = reader_unit(parse_unit_cell("mVpp"))
    assert (peak.canonical, peak.factor) == ("mVpp", pytest.approx(1e-3))
    counts = reader_unit(parse_unit_cell("ADC counts/(W/m2)"))
    assert counts.canonical == "ADC counts/(W/m2)"
    assert reader_unit(parse_unit_cell("µA")).canonical == "uA"  # the reader's own spelling when it knows one


@pytest.mark.parametrize(("text", "unit"), [(" hPa", "hPa"), (" kPa, typical", "kPa"), ("lux", "lux")])
def test_a_unit_symbol_pint_knows_after_a_number_is_its_unit(text: str, unit: str) -> None:
    found, printed, taken = unit_after_number(text)
    assert found is not None and found.canonical == unit and printed == unit and taken > 0


@pytest.mark.parametrize("text", [" in air", " at rest", " K resistor", " pieces"])
def test_words_and_single_letters_after_a_number_are_not_taken_as_units(text: str) -> None:
    assert unit_after_number(text) == (None, None, 0)


def test_a_dash_range_in_prose_carries_the_unit_after_the_second_number() -> None:
    (reading,) = read_values("Sensing span: 260 – 1260 hPa")
    assert (reading.min, reading.max, reading.unit.canonical, reading.text) == (260.0, 1260.0, "hPa",
                                                                                "260 – 1260 hPa")


def test_a_unit_cell_filled_into_several_rows_names_one_unit() -> None:
    # A unit cell spanning two rows, filled into each with the next row's unit whose degree sign was lost.
    assert reader_unit(parse_unit_cell("°C C")).canonical == "degC"
    assert reader_unit(parse_unit_cell("V V")).canonical == "V"
    assert parse_unit_cell("mA V") is None or reader_unit(parse_unit_cell("mA V")).canonical != "mA"


def test_a_request_in_a_unit_only_pint_knows_still_names_its_quantity() -> None:
    from app.agent.offline.model_units import requested_unit

    assert requested_unit("hPa").dimension == requested_unit("Pa").dimension != requested_unit("V").dimension
    assert requested_unit("K").dimension == requested_unit("degC").dimension == requested_unit("C").dimension
    assert requested_unit("pcs") is None  # not parsecs
