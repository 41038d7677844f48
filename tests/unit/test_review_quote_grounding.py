"""Grounding quotes written the way models write them: composite, annotated, labelled, re-serialised rows,
values converted to another unit, and numbers located on their own cell rather than on a part number."""

from __future__ import annotations

import pytest

from app.detectors.grounding import Outcome, ground_value, ground_values
from app.detectors.quote_fragments import fragments, readings, strip_annotations
from app.detectors.row_alignment import is_identifier
from app.documents.cache import open_index
from app.documents.index import DatasheetIndex
from tests.support.pdfs import placed_pdf

pytestmark = pytest.mark.usefixtures("isolated_index_cache")


# Column x positions of the invented table: parameter, symbol, conditions, min, typ, max, unit.
NAME, SYMBOL, COND, MIN, TYP, MAX, UNIT = 40, 150, 200, 330, 380, 430, 480


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> DatasheetIndex:
    path = tmp_path_factory.mktemp("pdf") / "table.pdf"
    page1 = [
        (NAME, 60, "Key figures"), (NAME, 75, "Noise floor: +/- 0.25 uV (or 3 counts)"),
    ]
    page2 = [
        (NAME, 60, "Table 3 Electrical characteristics"),
        (NAME, 80, "Parameter"), (SYMBOL, 80, "Symbol"), (COND, 80, "Conditions"), (MIN, 80, "Min"),
        (TYP, 80, "Typ"), (MAX, 80, "Max"), (UNIT, 80, "Unit"),
        # One parameter over three modes: the name is centred on the merged cell, beside the middle mode.
        (COND, 100, "Fast mode"), (TYP, 100, "4.5"), (MAX, 100, "6.1"), (UNIT, 100, "mA"),
        (NAME, 112, "Quiescent drain"), (SYMBOL, 112, "IQD"), (COND, 112, "Slow mode"), (TYP, 112, "1.2"),
        (MAX, 112, "2.0"), (UNIT, 112, "mA"),
        (COND, 124, "Sleep mode"), (TYP, 124, "0.3"), (UNIT, 124, "mA"),
        (NAME, 144, "Offset pressure"), (SYMBOL, 144, "Pofs"), (COND, 144, "any range"), (TYP, 144, "±6"),
        (UNIT, 144, "Pa"),
        (NAME, 164, "Holding moment"), (SYMBOL, 164, "17QX2408"), (TYP, 164, "40"), (UNIT, 164, "N.cm"),
    ]
    placed_pdf([page1, page2], path=path)
    return open_index(path)


def test_fragments_drop_annotations_labels_and_captions() -> None:
    quote = ('Noise floor: ± 0.25 uV (or 3 counts) [Key figures, p.1]; Offset pressure Pofs Typ=6 Pa '
             '(Max column in Table 3) | "Table 3 Electrical characteristics: Min: –, Max: 6.1 mA"')
    assert fragments(quote) == ["Electrical characteristics: 6.1 mA"]  # quoted segments win over commentary
    unquoted = quote.replace('"', "")
    assert fragments(unquoted) == ["Noise floor: ± 0.25 uV (or 3 counts)", "Offset pressure Pofs 6 Pa",
                                   "Electrical characteristics: 6.1 mA"]
    assert strip_annotations("300 [min] 1200 [max] hPa (p.4)") == "300 1200 hPa"
    assert readings("Electrical characteristics: 6.1 mA") == ["Electrical characteristics: 6.1 mA", "6.1 mA"]
    assert fragments("| Quiescent drain | IQD | Slow mode | – | 1.2 | 2.0 | mA |") == [
        "Quiescent drain IQD Slow mode – 1.2 2.0 mA"]


def test_composite_annotated_quote_is_grounded_fragment_by_fragment(table: DatasheetIndex) -> None:
    quote = "Noise floor: ± 0.25 uV (or 3 counts) [Key figures, p.1]; Offset pressure Pofs ±6 Pa (Table 3, p.2)"
    result = ground_value(table, 0, {"min": -6, "max": 6, "unit": "Pa"}, quote, [2])
    assert (result.outcome, result.page) == (Outcome.grounded, 2)
    assert [f["page"] for f in result.detail["fragments"]] == [1, 2]
    assert result.method in ("normalised", "row") and result.score is not None


def test_multi_row_cell_reserialised_is_grounded_on_its_own_row(table: DatasheetIndex) -> None:
    # The text layer interleaves the three modes; the model wrote the merged cell's name with the first mode only.
    quote = "Quiescent drain IQD Fast mode 4.5 6.1 mA"
    result = ground_value(table, 0, {"typical": 4.5, "max": 6.1, "unit": "mA"}, quote, [2])
    assert (result.outcome, result.method, result.page) == (Outcome.grounded, "row", 2)
    value_boxes = result.detail["value_boxes"]
    assert sorted(round(b[0]) for b in value_boxes) == [TYP, MAX]
    assert all(95 < (b[1] + b[3]) / 2 < 101 for b in value_boxes)  # on the fast-mode row, not the others
    # Another mode's numbers with the same quote are not in it.
    wrong = ground_value(table, 0, {"typical": 1.2, "max": 2.0, "unit": "mA"}, quote, [2])
    assert wrong.outcome is Outcome.value_not_in_quote


def test_labelled_cells_are_read_as_the_row(table: DatasheetIndex) -> None:
    quote = "Quiescent drain IQD: Slow mode. Min: –, Typ: 1.2, Max: 2.0, Unit: mA"
    result = ground_value(table, 0, {"typical": 1.2, "max": 2.0, "unit": "mA"}, quote, [2])
    assert (result.outcome, result.method) == (Outcome.grounded, "row")


def test_value_converted_to_another_unit_is_the_same_quantity(table: DatasheetIndex) -> None:
    quote = "Offset pressure Pofs any range ±6 Pa"
    converted = ground_value(table, 0, {"min": -0.06, "max": 0.06, "unit": "hPa"}, quote, [2])
    assert converted.outcome is Outcome.grounded
    other = ground_value(table, 0, {"min": -0.6, "max": 0.6, "unit": "hPa"}, quote, [2])
    assert other.outcome is Outcome.value_not_in_quote


def test_number_is_located_on_its_cell_never_on_a_part_number(table: DatasheetIndex) -> None:
    assert is_identifier("17QX2408") and not is_identifier("4.5V") and not is_identifier("10kΩ")
    result = ground_value(table, 0, {"typical": 40, "unit": "N.cm"}, "Holding moment 17QX2408: 40 N.cm", [2])
    assert result.outcome is Outcome.grounded
    assert [round(b[0]) for b in result.detail["value_boxes"]] == [TYP]
    # 17 is printed only inside the part number: it is not a value of the row.
    part = ground_value(table, 0, {"typical": 17, "unit": "N.cm"}, "Holding moment 17QX2408 40 N.cm", [2])
    assert part.outcome is Outcome.value_not_in_quote


def test_quote_from_another_document_is_not_found(table: DatasheetIndex) -> None:
    result = ground_value(table, 0, {"max": 5.5, "unit": "V"},
                          'Cross-checked the ratings table ("Logic Supply Voltage VDD –0.3 to 5.5 V")', [2])
    assert result.outcome is Outcome.quote_not_found


def test_an_answer_with_only_a_quote_is_still_grounded(table: DatasheetIndex) -> None:
    [found] = ground_values(table, [], "Offset pressure Pofs ±6 Pa", [2])
    assert found.outcome is Outcome.grounded
    [missing] = ground_values(table, [], "Output swing 12 V into 8 Ohm", [2])
    assert missing.outcome is Outcome.quote_not_found


def test_a_dot_leader_running_into_a_number_does_not_hide_it() -> None:
    from app.detectors.grounding import numbers_in

    assert [(n.values[0], n.unit) for n in numbers_in("Heater rating ..........7 watts")] == [(7.0, "watts")]
    assert [n.values[0] for n in numbers_in("into VDD pin ....100 mA, ver.5, 1.5 V")] == [100.0, 1.5]


def test_a_quote_of_cells_only_is_grounded_on_the_row_printing_them_in_order(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    # Two sub-rows whose cells the text layer gives column by column: "4.875 4.850 5.000 5.000 5.125 5.150".
    page = [(NAME, 80, "Output voltage"), (COND, 80, "IO = 10 mA"), (COND, 92, "IO = 1 A")]
    page += [(x, y, text) for x, cells in ((MIN, ("4.875", "4.850")), (TYP, ("5.000", "5.000")),
                                           (MAX, ("5.125", "5.150")))
             for y, text in zip((80, 92), cells, strict=True)]
    path = tmp_path_factory.mktemp("pdf") / "columns.pdf"
    placed_pdf([page], path=path)
    index = open_index(path)
    result = ground_value(index, 0, {"min": 4.875, "typical": 5.0, "max": 5.125, "unit": "V"},
                          "4.875 5.000 5.125", [1])
    assert result.outcome is Outcome.grounded and result.method == "row"
    # The sub-row below prints 4.850 5.000 5.150; no row prints these numbers in this order.
    assert ground_value(index, 0, {"min": 4.850, "max": 5.125, "unit": "V"}, "4.850 5.125 5.000",
                        [1]).outcome is Outcome.quote_not_found
    # Two numbers are printed on too many rows to say which one a quote came from.
    assert ground_value(index, 0, {"min": 4.875, "max": 5.125, "unit": "V"}, "4.875 5.125",
                        [1]).outcome is Outcome.quote_not_found


def test_a_converted_value_is_grounded_as_printed_after_a_round_trip_through_storage(table: DatasheetIndex) -> None:
    from app.detectors.record import Submission

    stored = {"found": True, "quote": "Quiescent drain IQD Slow mode 1.2 2.0 mA", "source_page": 2,
              "values": [{"typical": 0.0012, "max": 0.002, "unit": "A",
                          "printed": {"typical": 1.2, "max": 2.0, "unit": "mA"}}]}
    submission = Submission.from_mapping(stored)
    assert submission.values[0]["printed"] == {"typical": 1.2, "max": 2.0, "unit": "mA"}
    [result] = ground_values(table, submission.values, submission.quote, submission.pages)
    assert result.outcome is Outcome.grounded and result.detail["printed_value"]["unit"] == "mA"


def test_a_quote_stopping_before_its_value_cells_is_completed_by_its_row(table: DatasheetIndex) -> None:
    # The quote names the row and its conditions; the numbers stand further along the same row.
    result = ground_value(table, 0, {"typical": 1.2, "max": 2.0, "unit": "mA"}, "Quiescent drain IQD Slow mode",
                          [2])
    assert result.outcome is Outcome.grounded and result.detail["value_boxes"]
    # Numbers printed on another row are still not in the quote.
    other = ground_value(table, 0, {"typical": 4.5, "max": 6.1, "unit": "mA"}, "Quiescent drain IQD Slow mode", [2])
    assert other.outcome is Outcome.value_not_in_quote


def test_a_sub_rows_figures_read_apart_between_its_name_and_its_conditions_are_the_quotes(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    # The text layer reads the name, then the conditions cell merged over this sub-row and the row below, and the
    # sub-row's figures, printed on a line between them, only after them.
    page = [(NAME, 100, "Total charge"), (SYMBOL, 100, "QG"),
            (NAME, 128, "Source charge"), (SYMBOL, 128, "QS"), (COND, 128, "VDS = 12 V, VGS = 5 V"),
            (TYP, 128, "1.3"),
            (TYP, 114, "5"), (MAX, 114, "7.5"),
            (TYP, 142, "9")]
    path = tmp_path_factory.mktemp("pdf") / "merged.pdf"
    placed_pdf([page], path=path)
    index = open_index(path)
    quote = "Total charge QG Source charge QS VDS = 12 V, VGS = 5 V"
    assert ground_value(index, 0, {"typical": 5, "max": 7.5, "unit": "nC"}, quote, [1]).outcome is Outcome.grounded
    # A line of figures below the quote's lines is not the quote's.
    assert ground_value(index, 0, {"typical": 9, "unit": "nC"}, quote, [1]).outcome is Outcome.value_not_in_quote


def test_a_note_or_equation_mark_is_no_figure(tmp_path_factory: pytest.TempPathFactory) -> None:
    page = [(NAME, 80, "Reset threshold"), (TYP, 80, "2.5"), (UNIT, 80, "(3)"),
            (NAME, 100, "Hysteresis"), (TYP, 100, "3"), (UNIT, 100, "mV")]
    path = tmp_path_factory.mktemp("pdf") / "notes.pdf"
    placed_pdf([page], path=path)
    index = open_index(path)
    assert ground_value(index, 0, {"typical": 3}, "(3)", [1]).outcome is Outcome.value_not_in_quote
    assert ground_value(index, 0, {"typical": 3, "unit": "mV"}, "Hysteresis 3 mV", [1]).outcome is Outcome.grounded
