"""How the offline reader tells a value from a label, and a requested condition from a row measured at another."""

from __future__ import annotations

import pytest

from app.agent.offline.candidates import Candidate
from app.agent.offline.lines import part_above_caption, part_blocks
from app.agent.offline.quotes import build_quote
from app.agent.offline.reader import (
    Scored,
    _assignments_agree,
    _derived_quantity,
    _direction_differs,
    _met_by_table_only,
    _polarity_differs,
    _token_match,
    item_score,
    name_score,
    only_one_names_condition,
    score,
)
from app.agent.offline.rows import quantity_heading
from app.agent.offline.synonyms import compact, content_tokens, parse_request, tokens
from app.agent.offline.values import latin_lookalikes, read_values
from app.units import parse_unit


def _singles(text: str) -> list[float | None]:
    return [r.typical for r in read_values(text) if r.kind == "single"]


def test_a_bracketed_note_number_is_no_value() -> None:
    assert _singles("[2] VCE = 3 V") == [3.0]


def test_a_number_ending_a_heading_is_no_value_but_a_ratio_or_a_labelled_value_is() -> None:
    assert _singles("Selection -16: gain versus current") == []
    assert _singles("Gain: 35") == [35.0]
    assert _singles("Mix 1:4") == [1.0, 4.0]


def test_cyrillic_letters_in_a_unit_read_as_the_latin_ones() -> None:
    assert latin_lookalikes("-20 ~ +70 °\u0421") == "-20 ~ +70 °C"
    (reading,) = read_values("-20 ~ +70 °\u0421")
    assert (reading.min, reading.max, reading.unit.canonical if reading.unit else None) == (-20, 70, "degC")


def _condition(item: str, row: str) -> float:
    return item_score(item, compact(row), content_tokens(row), row)


def test_a_requested_part_number_is_met_only_by_that_part() -> None:
    assert _condition("QX1117I", "the junction temperature of the QX1117I") == 1.0
    assert _condition("QX1117I", "the junction temperature of the QX1117") == 0.0
    assert _condition("QX1117", "the junction temperature of the QX1117I") == 0.0


def test_a_condition_is_not_met_by_the_tail_of_a_longer_word() -> None:
    assert _condition("K suffix package", "Thermal resistance K Suffix Package") == 1.0
    # Spaces dropped, "ksuffixpackage" is inside "lksuffixpackage": another package all the same.
    assert _condition("K suffix package", "Thermal resistance D, LK Suffix Package") < 1.0


def test_a_quantity_in_a_condition_is_met_only_by_the_same_quantity() -> None:
    assert _condition("0 dBm level", "3 0 dBm level 14.5 mA") == 1.0
    # Its digits inside other numbers ("-8", "10.0") are not it.
    assert _condition("0 dBm level", "2 -8 dBm level 10.0 mA") < 0.5
    # The same quantity in other units still meets it.
    assert _condition("IL = 250 mA", "IL = 0.25 A") == 1.0
    # A condition that is a quantity alone, printed under another prefix, is met; another value is not.
    assert _condition("1 Mbps", "Sensitivity at 1% PER (@1000kbps)") == 1.0
    assert _condition("2 Mbps", "Sensitivity at 1% PER (@1000kbps)") < 0.5


def test_a_condition_range_is_met_only_by_the_same_range() -> None:
    assert _condition("TJ = -20°C to +70°C", "Drift TJ = -20°C to +70°C") == 1.0
    # The same lower end, another upper end: the row of another temperature range.
    assert _condition("TJ = -20°C to +70°C", "Drift TJ = -20°C to +105°C") == 0.0
    assert _condition("TJ = -20°C to +70°C", "Drift TJ = −20°C to +70°C") == 1.0


def test_a_resistance_printed_with_the_ohm_sign_sets_the_same_quantity() -> None:
    # The Ohm sign (U+2126) and the Greek capital omega print alike: "1K\u2126" is the requested 1 kΩ.
    assert _assignments_agree("RG = 1k\u03a9", "Holding level RG=1K\u2126") is True
    assert _assignments_agree("RG = 1k\u03a9", "Holding level RG=10K\u2126") is False


def _scored(label: str, own: str) -> Scored:
    cand = Candidate(4, "table_row", label, own_label=own, typical=1.0)
    return Scored(cand, 1.0, 1.0, 1.1)


def test_of_equal_readings_the_only_one_naming_the_condition_in_its_own_label_is_chosen() -> None:
    query = parse_request("Sense voltage", "V", ["TA = Tmin to Tmax"])
    whole = _scored("Sense voltage deviation over temperature", "Sense voltage deviation over temperature")
    sub_row = _scored("Sense voltage", "TA = Tmin to Tmax")
    assert only_one_names_condition(query, [whole, sub_row]) is sub_row
    # Two that name it (or none) leave the tie standing.
    assert only_one_names_condition(query, [sub_row, _scored("Sense voltage", "TA = Tmin to Tmax")]) is None
    assert only_one_names_condition(query, [whole]) is None


def test_a_word_making_a_change_of_the_quantity_marks_a_derived_row_unless_requested() -> None:
    row = Candidate(4, "table_row", "Sense voltage deviation over temperature range")
    assert _derived_quantity(parse_request("Sense voltage"), row)
    assert not _derived_quantity(parse_request("Sense voltage deviation"), row)
    assert not _derived_quantity(parse_request("Sense voltage"), Candidate(4, "table_row", "Sense voltage"))


def test_an_offset_of_the_quantity_is_another_quantity_unless_requested() -> None:
    row = Candidate(4, "table_row", "Floating rail offset voltage")
    assert _derived_quantity(parse_request("Floating rail voltage"), row)
    assert not _derived_quantity(parse_request("Floating rail offset voltage"), row)


def test_a_terminal_of_the_other_polarity_contradicts_the_request() -> None:
    assert _polarity_differs("T2(-), G(+)", "Gate trigger current T2(+), G(+)")
    assert not _polarity_differs("T2(-), G(+)", "Gate trigger current T2(-), G(+)")
    assert not _polarity_differs("T2(-), G(+)", "Gate trigger current")


def test_a_threshold_crossed_the_other_way_contradicts_the_request() -> None:
    assert _direction_differs("VIN from high to low", "Wake threshold VIN from low to high, measures VIN-VBAT")
    assert not _direction_differs("VIN from high to low", "Wake threshold VIN from high to low")
    assert not _direction_differs("VIN from high to low", "Wake threshold VIN falling")


def test_a_footnote_number_glued_to_the_last_word_of_a_name_is_no_part_of_it() -> None:
    assert _token_match("resistance", "resistance1")
    assert _token_match("capacitance", "capacitance12")
    # Part numbers and symbols keep their digits: "vout" is not "vout1", "lm317" not "lm3171".
    assert not _token_match("vout", "vout1")
    assert not _token_match("lm317", "lm3171")


def test_a_title_names_a_quantity_only_when_it_says_more_than_the_section() -> None:
    assert quantity_heading("THERMAL RESISTANCE RATINGS") == "THERMAL RESISTANCE"
    assert quantity_heading("Electrical Characteristics") == ""
    assert quantity_heading("Absolute Maximum Ratings") == ""
    assert quantity_heading("Output stage") == ""  # no section word: a heading, not a quantity's table


def test_the_part_a_table_is_printed_for_stands_above_its_caption() -> None:
    lines = ["Electrical characteristics", "QX7805", "Unless otherwise specified, VIN = 10V", "Symbol",
             "QX7806", "(Continued)", "Unless otherwise specified, VIN = 11V", "Symbol"]
    assert part_above_caption("Unless otherwise specified, VIN = 10V", lines) == "QX7805"
    assert part_above_caption("Unless otherwise specified, VIN = 11V", lines) == "QX7806"
    assert part_above_caption("QX7809", lines) == "QX7809"
    assert part_above_caption("Electrical characteristics", lines) == ""
    # A caption printed twice does not say which table it heads.
    assert part_above_caption("Symbol", lines) == ""


def test_a_condition_the_whole_table_meets_tells_no_row_apart() -> None:
    query = parse_request("Output voltage", "V", ["QX7805"])
    in_context = Candidate(2, "table_row", "Output voltage", context="QX7805 Output voltage",
                           own_label="Output voltage", line_text="VO Output voltage 4.8 5.0 5.2 V")
    in_own_row = Candidate(2, "table_row", "Output voltage", context="QX7805 Output voltage",
                           own_label="Output voltage", line_text="VO Output voltage QX7805 4.8 5.0 5.2 V")
    assert _met_by_table_only(query, Scored(in_context, 1.0, 1.0, 1.3))
    assert not _met_by_table_only(query, Scored(in_own_row, 1.0, 1.0, 1.3))
    assert not _met_by_table_only(query, Scored(in_context, 1.0, 0.5, 1.1))


def test_an_absolute_maximum_request_names_the_quantity_without_its_qualifier_words() -> None:
    for name in ("Absolute maximum supply voltage", "Abs. max. supply voltage", "Supply voltage, absolute maximum",
                 "Maximum supply voltage rating", "Maximum rating of supply voltage"):
        query = parse_request(name, "V")
        assert query.wants_abs_max, name
        assert query.core.casefold() == "supply voltage", name
    plain = parse_request("Maximum supply voltage", "V")
    assert not plain.wants_abs_max and plain.wants_field == "max"
    assert ("ESD", 0.9) in parse_request("ESD rating").weighted_phrases


def test_a_line_opening_with_a_section_title_is_one_however_long_and_a_sentence_is_not() -> None:
    from app.agent.offline.candidates import is_section_title

    assert is_section_title("MAXIMUM RATINGS (Full operating ambient temperature range applies, unless otherwise "
                            "noted.)")
    assert is_section_title("6.2 ESD Ratings")
    assert not is_section_title("Distributors for availability and specifications.")


def test_a_receiver_sensitivity_is_the_sensitivity_a_receiver_section_prints() -> None:
    query = parse_request("Receiver sensitivity", "dBm")
    assert "sensitivity" in query.phrases and "RXSENS" in query.all_symbols
    # A sensor's sensitivity has other units: the concept asks for no dimension of its own.
    assert parse_request("Sensitivity").dimensions == set()


def test_a_row_read_from_one_cell_per_line_is_quoted_from_those_lines() -> None:
    cand = Candidate(4, "line", "Clock high pulse width", min=30.0, printed=["30"],
                     line_text="30 ns min Clock high pulse width")
    lines = ["t1", "8", "ns min", "Strobe setup time", "t2", "30", "ns min", "Clock high pulse width", "t3", "40"]
    assert build_quote(lines, cand) == "30 ns min Clock high pulse width"


def test_a_column_headed_by_the_parameters_symbol_alone_names_it_in_a_matrix_cell() -> None:
    query = parse_request("Junction-to-ambient thermal resistance", "degC/W")
    cell = Candidate(5, "table_cell", "8-Lead MSOP \u03b8JA", typical=120.0, line_text="8-Lead MSOP 120 °C/W")
    assert name_score(query, cell) >= 0.5
    # The symbol printed in the row itself is no column header; another column's symbol names nothing.
    assert name_score(query, Candidate(5, "table_cell", "8-Lead MSOP \u03b8JA", line_text="\u03b8JA 120")) < 0.5
    assert name_score(query, Candidate(5, "table_cell", "8-Lead MSOP \u03b8JC", line_text="8-Lead MSOP 40")) < 0.5


def test_a_pin_is_a_terminal_and_a_switch_side_may_go_unprinted() -> None:
    assert "Change in adjust terminal current" in parse_request("Change in adjust pin current").phrases
    assert "PMOS on-resistance" in parse_request("High-side PMOS on-resistance").phrases
    assert "delay matching" in parse_request("High/low side delay matching").phrases
    assert parse_request("Output voltage").phrases == ["Output voltage"]


def test_the_other_switch_side_does_not_name_the_requested_one() -> None:
    query = parse_request("High-side switch on resistance", "mohm")
    high = Candidate(3, "table_row", "High-side switch on resistance", typical=40.0)
    low = Candidate(3, "table_row", "Low-side switch on resistance", typical=30.0)
    bare = Candidate(3, "table_row", "Switch on resistance", typical=30.0)
    assert name_score(query, high) > name_score(query, bare) >= 0.8 > 0.5 > name_score(query, low)


def test_a_diodes_junction_capacitance_is_its_diode_capacitance() -> None:
    query = parse_request("Junction capacitance", "pF")
    assert name_score(query, Candidate(2, "table_row", "Diode capacitance", max=4.0)) >= 0.85


def test_words_after_over_qualify_the_quantity_the_words_before_name() -> None:
    query = parse_request("Change in bias pin current over line and load", "uA")
    assert name_score(query, Candidate(5, "table_row", "Change in bias terminal current", max=5.0)) >= 0.65


def test_a_surge_current_is_named_by_its_conventional_symbol() -> None:
    query = parse_request("Non-repetitive surge on-state current", "A")
    row = Candidate(1, "table_row", "Peak Surge Current, One Full Cycle, Sine Wave 60 Hz (TC = 95 °C)", symbol="ITSM",
                    max=17.0)
    assert name_score(query, row) >= 0.85
    assert name_score(query, Candidate(1, "table_row", "On-state RMS current", symbol="IT(RMS)", max=1.4)) < 0.72


def test_a_feature_list_split_by_part_gives_each_line_its_part() -> None:
    lines = ["Features", "QM4410 Processor", "2k bytes data memory", "QM12U4", "1k bytes data memory"]
    assert part_blocks(lines) == ["", "QM4410", "QM4410", "QM12U4", "QM12U4"]
    # One part named on the page (its own name in a header, say) splits nothing.
    assert part_blocks(["QM4410", "2k bytes data memory", "1k bytes data memory"]) == ["", "", ""]
    # A section title ends the list: the tables below are no part's of the list.
    lines = ["QM44", "0 °C to 70 °C", "QM44I", "-40 °C to 85 °C", "QM44 Electrical Characteristics", "0 °C to 70 °C"]
    assert part_blocks(lines) == ["QM44", "QM44", "QM44I", "QM44I", "", ""]


def test_a_size_in_bytes_is_the_memory_the_page_names_without_the_word_size() -> None:
    assert "Data memory" in parse_request("Data memory size", "kB").phrases
    assert "Data memory" not in parse_request("Data memory size", "mm").phrases


def test_a_factor_of_a_size_is_no_length_of_its_own() -> None:
    query = parse_request("Thickness", "mm")
    factor = Candidate(1, "line", "Thickness", typical=480.0, unit=parse_unit("mm"), size_factor=True)
    alone = Candidate(1, "line", "Thickness", typical=0.21, unit=parse_unit("mm"))
    assert score(query, factor) is None
    assert score(query, alone) is not None
    assert score(parse_request("Sheet count", "pcs"), Candidate(1, "line", "Sheet count", typical=20.0,
                                                               size_factor=True)) is not None


@pytest.mark.parametrize("label", ["VIN Undervoltage Lockout Threshold", "Under-Voltage Lock-Out Threshold",
                                   "UVLO Threshold"])
def test_an_acronym_and_the_words_it_stands_for_are_one_name(label: str) -> None:
    for request in ("UVLO threshold", "Undervoltage lockout threshold", "Under voltage lock-out threshold"):
        assert name_score(parse_request(request, "V"), Candidate(1, "table_row", label)) >= 0.9, (request, label)
    assert tokens("UVLO undervoltage lockout rising") == ["undervoltage", "lockout", "rising"]
