"""Reading tables and text lines, choosing among candidates, declining, and quoting verbatim."""

from __future__ import annotations

from app.agent.offline.reader import Evidence, decide
from app.agent.offline.rows import Table, parse_markdown_tables, table_candidates
from app.agent.offline.synonyms import parse_request

CHARACTERISTICS = """
| Parameter | Symbol | Conditions | Min | Typ | Max | Unit |
|---|---|---|---|---|---|---|
| Operating Supply Voltage | VDD |  | 2.7 | — | 5.5 | V |
| Supply Current | IDD | VDD = 5.5V, active |  | 450 | 900 | µA |
| Supply Current | IDD | VDD = 5.5V, standby |  | 2.5 | 5 | µA |
| Output Power | POUT | VDD=6V, RL=8Ω<br>VDD=9V, RL=8Ω | 250<br>500 | 325<br>700 |  | mW<br>mW |
"""

ABS_MAX_PAGE = [
    "ABSOLUTE MAXIMUM RATINGS",
    "Supply voltage VDD .......... -0.3V to +6.5V",
    "Storage temperature ......... -65°C to +150°C",
    "ELECTRICAL CHARACTERISTICS",
    "Operating Supply Voltage",
    "VDD",
    "2.7",
    "—",
    "5.5",
    "V",
]


def _evidence(markdown: str = CHARACTERISTICS, page: int = 3, lines: list[str] | None = None) -> Evidence:
    evidence = Evidence()
    evidence.tables[page] = parse_markdown_tables(markdown, page)
    if lines is not None:
        evidence.page_lines[page] = lines
    return evidence


def _values(decision) -> tuple:
    cand = decision.best.candidate
    return cand.min, cand.typical, cand.max, cand.unit.canonical if cand.unit else None


def test_role_columns_give_min_typ_max_and_unit() -> None:
    decision = decide(parse_request("Supply voltage", "V"), _evidence())
    assert _values(decision) == (2.7, None, 5.5, "V")


def test_requested_conditions_choose_between_rows() -> None:
    standby = decide(parse_request("Supply current", "uA", ["standby"]), _evidence())
    active = decide(parse_request("Supply current", "uA", ["active"]), _evidence())
    assert _values(standby) == (None, 2.5, 5.0, "uA")
    assert _values(active) == (None, 450.0, 900.0, "uA")
    assert "other readings exist" in standby.reason


def test_multi_line_cells_are_paired_line_by_line() -> None:
    nine = decide(parse_request("Output power", "mW", ["VDD=9V"]), _evidence())
    six = decide(parse_request("Output power", "mW", ["VDD=6V"]), _evidence())
    assert _values(six) == (250.0, 325.0, None, "mW")
    assert _values(nine) == (500.0, 700.0, None, "mW")


def test_unit_dimension_rules_out_rows_of_another_quantity() -> None:
    # "Supply voltage rejection ratio" names the words of the request, but its value is in dB, not volts.
    markdown = ("| Parameter | Symbol | Typ | Unit |\n|---|---|---|---|\n"
                "| Supply voltage rejection ratio | PSRR | 80 | dB |\n")
    decision = decide(parse_request("Supply voltage"), _evidence(markdown))
    assert decision.best is None
    assert "declin" in decision.reason or "no table row" in decision.reason


def test_declines_when_nothing_names_the_parameter() -> None:
    decision = decide(parse_request("Output impedance", "ohm"), _evidence())
    assert decision.best is None
    assert decision.reason


def test_absolute_maximum_request_prefers_the_ratings_section() -> None:
    evidence = _evidence(lines=ABS_MAX_PAGE)
    rating = decide(parse_request("Supply voltage (absolute maximum)", "V"), evidence)
    operating = decide(parse_request("Supply voltage", "V"), evidence)
    assert _values(rating) == (-0.3, None, 6.5, "V")
    assert rating.quote == "Supply voltage VDD .......... -0.3V to +6.5V"
    assert _values(operating) == (2.7, None, 5.5, "V")


def test_table_quote_is_verbatim_page_text_with_its_unit() -> None:
    decision = decide(parse_request("Supply voltage", "V"), _evidence(lines=ABS_MAX_PAGE))
    assert decision.quote == "Operating Supply Voltage VDD 2.7 — 5.5 V"
    assert " ".join(ABS_MAX_PAGE).find(decision.quote) >= 0


def test_feature_line_with_nominal_and_range_reads_as_one_value() -> None:
    evidence = Evidence(page_lines={6: ["PWM control input signal", "Target frequency: 25kHz, acceptable range 21kHz "
                                                                  "to 28kHz"]})
    decision = decide(parse_request("PWM frequency", "kHz"), evidence)
    assert _values(decision) == (21.0, 25.0, 28.0, "kHz")


def test_value_named_after_it_on_a_feature_line() -> None:
    evidence = Evidence(page_lines={1: ["Features", "5mA operating current per channel.", "Send data at 800Kbps."]})
    decision = decide(parse_request("Operating current per channel", "mA"), evidence)
    assert _values(decision) == (None, 5.0, None, "mA")
    assert decision.quote == "5mA operating current per channel."


MATRIX = """
| Model | Step Angle (deg) | Rated Current (A) | Phase Resistance (ohm) |
|---|---|---|---|
| 17HS2408 | 1.8 | 0.6 | 8 |
| 17HS4401 | 1.8 | 1.7 | 1.5 |
"""


def test_matrix_table_cell_chosen_by_row_and_column() -> None:
    decision = decide(parse_request("Rated current (17HS4401)", "A", ["model 17HS4401"]), _evidence(MATRIX, 1))
    assert _values(decision) == (None, 1.7, None, "A")
    wrong_model = decide(parse_request("Phase resistance", "ohm", ["17HS2408"]), _evidence(MATRIX, 1))
    assert _values(wrong_model) == (None, 8.0, None, "ohm")


def test_name_wrapped_over_rows_sharing_a_symbol_and_headerless_continuation() -> None:
    first = "| Parameters | Sym | Min | Typ | Max | Units | Conditions |\n|---|---|---|---|---|---|---|\n" \
            "| Resistance | RAB | 4.0 | 5 | 6.0 | kΩ | -502 devices |\n" \
            "| (± 20%) | RAB | 8.0 | 10 | 12.0 | kΩ | -103 devices |\n"
    continuation = "|  |  |  |  |  |  |  |\n|---|---|---|---|---|---|---|\n" \
                   "| Wiper Resistance | RW | — | 75 | 160 | Ω | VDD = 5.5 V |\n"
    evidence = Evidence()
    evidence.tables[5] = parse_markdown_tables(first + "\n" + continuation, 5)
    assert len(evidence.tables[5]) == 2
    ten_k = decide(parse_request("Resistance (RAB), 10 kΩ option", "kohm", ["-103 devices"]), evidence)
    wiper = decide(parse_request("Wiper resistance", "ohm"), evidence)
    assert _values(ten_k) == (8.0, 10.0, 12.0, "kohm")
    assert _values(wiper) == (None, 75.0, 160.0, "ohm")


def test_merged_max_unit_header_carries_the_unit_in_the_cell() -> None:
    markdown = "| Symbol | Parameter | Min. | Typ. | Max. Unit |\n|---|---|---|---|---|\n" \
               "| Isource | Output current source VCC = 15 V | 20 | 40 | 60 mA |\n" \
               "| Isink | Output sink current VCC = 15 V | 10 | 20 | mA |\n"
    found, _roles = table_candidates(Table(7, parse_markdown_tables(markdown, 7)[0].rows))
    source = [c for c in found if c.symbol == "Isource"][0]
    sink = [c for c in found if c.symbol == "Isink"][0]
    assert (source.min, source.typical, source.max, source.unit.canonical) == (20.0, 40.0, 60.0, "mA")
    assert (sink.min, sink.typical, sink.max, sink.unit.canonical) == (10.0, 20.0, None, "mA")


def test_text_layer_table_rows_one_cell_per_line() -> None:
    lines = ["ELECTRICAL CHARACTERISTICS", "PARAMETER", "SYMBOL", "MIN", "TYP", "MAX", "UNIT",
             "Operating Supply Voltage", "VDD", "2.7", "—", "5.5", "V",
             "Quiescent Current", "IQ", "VDD=5V", "—", "4", "8", "mA"]
    evidence = Evidence(page_lines={3: lines})
    assert _values(decide(parse_request("Quiescent current", "mA"), evidence)) == (None, 4.0, 8.0, "mA")
    assert _values(decide(parse_request("Supply voltage", "V"), evidence)) == (2.7, None, 5.5, "V")


def test_bound_to_a_symbol_is_a_limit_not_an_offset() -> None:
    markdown = ("| Parameter | Symbol | Ratings | Unit |\n|---|---|---|---|\n"
                "| Logical input voltage | VI | -0.3V～VDD+0.7 | V |\n")
    decision = decide(parse_request("Logical input voltage", "V"), _evidence(markdown, 2))
    assert _values(decision) == (-0.3, None, None, "V")


def test_unit_in_the_column_header_or_the_parameter_name() -> None:
    header_unit = "| Parameter | Min (V) | Max (V) |\n|---|---|---|\n| Supply voltage | 1.8 | 3.6 |\n"
    name_unit = "| Parameter | Min | Typ | Max |\n|---|---|---|---|\n| Supply current (mA) | | 1.2 | 2.0 |\n"
    assert _values(decide(parse_request("Supply voltage"), _evidence(header_unit))) == (1.8, None, 3.6, "V")
    assert _values(decide(parse_request("Supply current"), _evidence(name_unit))) == (None, 1.2, 2.0, "mA")


def test_rows_sharing_a_symbol_keep_their_own_full_names() -> None:
    markdown = ("| Parameters | Sym | Min | Typ | Max | Units |\n|---|---|---|---|---|---|\n"
                "| Specified Temperature Range | TA | -40 | — | +125 | °C |\n"
                "| Storage Temperature Range | TA | -65 | — | +150 | °C |\n")
    decision = decide(parse_request("Storage temperature"), _evidence(markdown, 14))
    assert _values(decision) == (-65.0, None, 150.0, "degC")


def test_tolerance_in_parentheses_is_not_the_value() -> None:
    evidence = Evidence(page_lines={1: ["Rotational speed (+/–10%) 3000 RPM"]})
    assert _values(decide(parse_request("Rotational speed"), evidence)) == (None, 3000.0, None, "rpm")


def test_blank_lines_are_empty_cells_and_interleaved_rows_are_not_guessed() -> None:
    text = ("--- page 3 ---\nPARAMETER\nSYMBOL\nTEST CONDITIONS\nMIN\nTYP\nMAX\nUNIT\n"
            "Quiescent Current\nIQ\nVss=6V, VIN=0\n \n4\n8\nmA\n"
            "Voltage Gain\nGV\nVss=6V, f=1kHz\n10µF from pin 1 to pin 8\n \n26\n46\n \ndB\ndB\n")
    from app.agent.offline.policy import split_pages

    evidence = Evidence(page_lines=split_pages(text), cell_lines=split_pages(text, keep_blank=True))
    assert _values(decide(parse_request("Quiescent current", "mA"), evidence)) == (None, 4.0, 8.0, "mA")
    gain = decide(parse_request("Voltage gain", "dB"), evidence)
    assert gain.best is None or _values(gain) != (26.0, 46.0, None, "dB")


def test_figure_captions_rank_below_specifications() -> None:
    lines = ["10 kΩ – Nominal Resistance", "FIGURE 2-24: Resistance vs. temperature.",
             "Nominal resistance 10 kΩ ±20%"]
    decision = decide(parse_request("Nominal resistance", "kohm"), Evidence(page_lines={20: lines}))
    assert decision.quote == "Nominal resistance 10 kΩ ±20%"


def test_number_in_the_name_picks_the_row_with_that_number() -> None:
    # One cell per line, as the text layer prints the timing table.
    lines = ["Data Transfer Time", "T0H", "0 code, high voltage time", "220ns~380ns",
             "T1H", "1 code, high voltage time", "580ns~1µs", "T0L", "0 code, low voltage time", "580ns~1µs"]
    one = decide(parse_request("1 code high-level time", "ns"), Evidence(page_lines={3: lines}))
    zero = decide(parse_request("0 code high-level time", "ns"), Evidence(page_lines={3: lines}))
    assert _values(one) == (580.0, None, 1000.0, "ns")
    assert _values(zero) == (220.0, None, 380.0, "ns")


def test_limit_named_in_the_column_header_sets_the_field() -> None:
    markdown = ("| Model | Holding Torque (N.cm Min) | Detent Torque (N.cm Max) | Rated Current (A) |\n"
                "|---|---|---|---|\n| 17HS1111 | 40 | 2.2 | 1.7 |\n| 17HS2222 | 52 | 2.6 | 1.3 |\n")
    holding = decide(parse_request("Holding torque", "N.cm", ["17HS2222"]), _evidence(markdown, 1))
    detent = decide(parse_request("Detent torque", "N.cm", ["17HS1111"]), _evidence(markdown, 1))
    current = decide(parse_request("Rated current", "A", ["17HS2222"]), _evidence(markdown, 1))
    assert _values(holding) == (52.0, None, None, "N.cm")
    assert _values(detent) == (None, None, 2.2, "N.cm")
    assert _values(current) == (None, 1.3, None, "A")


def test_logic_level_vocabulary_and_symbol() -> None:
    evidence = Evidence(page_lines={6: ["PWM control input signal", "Maximum voltage for logic low: VIL=0,8V",
                                        "Absolute maximum current sourced: Imax=5mA"]})
    decision = decide(parse_request("Low-level input voltage", "V"), evidence)
    assert _values(decision) == (None, None, 0.8, "V")


def test_count_is_the_number_printed_before_the_things_counted() -> None:
    lines = ["The board contains 54 digital input/output pins, 16 analog inputs, 4 UARTs (hardware serial ports)"]
    analog = decide(parse_request("Number of analog inputs"), Evidence(page_lines={1: lines}))
    digital = decide(parse_request("Number of digital I/O pins"), Evidence(page_lines={1: lines}))
    assert analog.best.candidate.typical == 16.0
    assert digital.best.candidate.typical == 54.0


def test_a_row_named_with_a_limit_word_gives_that_limit_and_answers_a_request_leading_with_it() -> None:
    markdown = ("| Item | Value |\n|---|---|\n| Max. flow rate | 186.7 m³/h |\n| Min. flow rate | 40.5 m³/h |\n"
                "| Rated speed | 3000 RPM |\n")
    assert _values(decide(parse_request("Maximum flow rate"), _evidence(markdown, 1))) == (None, None, 186.7, "m3/h")
    assert _values(decide(parse_request("Minimum flow rate"), _evidence(markdown, 1))) == (40.5, None, None, "m3/h")
    assert _values(decide(parse_request("Rated speed"), _evidence(markdown, 1))) == (None, 3000.0, None, "rpm")


def test_a_group_title_merged_into_the_first_sub_header_cell_still_gives_the_column_roles() -> None:
    titled = ("| Parameter | Symbol | Color | Drive current: <0.5mA Min. | Typ. | Max. | Unit |\n"
              "|---|---|---|---|---|---|---|\n"
              "| Luminous intensity | IV | RED | 50 | 80 | 100 | mcd |\n"
              "| Luminous intensity | IV | GREEN | 200 | 270 | 300 | mcd |\n")
    decision = decide(parse_request("Luminous intensity", None, ["RED"]), _evidence(titled, 3))
    assert _values(decision) == (50.0, 80.0, 100.0, "mcd")


def test_columns_headed_only_by_the_conventional_symbol_name_the_value_with_less_confidence() -> None:
    guide = ("| Part No. | Lens Type | Iv (mcd) @ 10mA Min. Typ. |  | Angle |\n|---|---|---|---|---|\n"
             "| L-1234 | RED DIFFUSED | 8 | 20 | 40° |\n")
    named = ("| Parameter | Conditions | Min. | Typ. | Unit |\n|---|---|---|---|---|\n"
             "| Luminous intensity | @ 10mA | 8 | 20 | mcd |\n")
    by_symbol = decide(parse_request("Luminous intensity", None, ["@ 10mA"]), _evidence(guide, 2))
    by_name = decide(parse_request("Luminous intensity", None, ["@ 10mA"]), _evidence(named, 2))
    assert _values(by_symbol) == (8.0, 20.0, None, "mcd")
    assert by_symbol.confidence < by_name.confidence
    # The symbol of another quantity does not name it.
    assert decide(parse_request("Forward voltage"), _evidence(guide, 2)).best is None


def test_a_tolerance_in_a_numbered_note_is_not_the_value() -> None:
    lines = ["Notes:", "1. Wavelength: +/-1nm.", "2. Forward Voltage: +/-0.1V.",
             "Typ.", "Max.", "Forward Voltage", "2", "2.5", "V", "IF=20mA"]
    decision = decide(parse_request("Forward voltage", "V", ["IF=20mA"]), Evidence(page_lines={2: lines}))
    assert _values(decision) == (None, 2.0, 2.5, "V")
    assert decision.best.conditions == 1.0


GRADES = ("| Symbol | Parameter | Min. | Typ. | Max. | Unit |\n|---|---|---|---|---|---|\n"
          "| Vio | Input offset voltage XY158A | | | 2 | mV |\n"
          "| Vio | XY258A, XY358A | | 1 | 3 | mV |\n"
          "| Vio | XY358 | | 2 | 7 | mV |\n")


def test_a_row_that_is_one_part_grade_of_several_yields_to_an_ungraded_statement() -> None:
    features = ["Features", "Low input offset voltage: 2 mV"]
    evidence = _evidence(GRADES, 6)
    evidence.page_lines[1] = features
    assert _values(decide(parse_request("Input offset voltage"), evidence)) == (None, 2.0, None, "mV")
    alone = decide(parse_request("Input offset voltage"), _evidence(GRADES, 6))
    named = decide(parse_request("Input offset voltage", None, ["XY158A"]), _evidence(GRADES, 6))
    assert "part grades" in alone.reason and alone.confidence < named.confidence


def test_a_label_above_naming_the_limit_in_parentheses_sets_the_field_of_the_values_below() -> None:
    lines = ["Drive", "Speed (approx., max.)", "*5", "Burst rate: Hi: 11 fps, Lo: 3 fps", "Weight", "Approx. 352 g"]
    decision = decide(parse_request("Burst rate", None, ["Hi"]), Evidence(page_lines={1: lines}))
    assert _values(decision) == (None, None, 11.0, "fps")
    plain = ["Drive", "Speed (approx.)", "Burst rate: Hi: 11 fps, Lo: 3 fps"]
    assert _values(decide(parse_request("Burst rate", None, ["Hi"]), Evidence(page_lines={1: plain}))) == (
        None, 11.0, None, "fps")


def test_a_unit_cell_printed_before_the_value_cell_is_its_unit_and_the_tolerance_after_it_is_not_the_value() -> None:
    lines = ["SPECIFICATION", "UNIT", "VALUE", "Haze ratio, HZ*", "%", "38.5 +/- 2", "(400-750nm)",
             "Gloss ratio, GL*", "%", "30.1"]
    decision = decide(parse_request("Haze ratio", None, ["400-750nm"]), Evidence(page_lines={1: lines}))
    assert _values(decision) == (None, 38.5, None, "%")
    assert decision.best.conditions == 1.0


SIBLING_CAPACITANCES = """
| Parameters | Sym | Min | Typ | Max | Units | Conditions |
|---|---|---|---|---|---|---|
| Capacitance (PA) | CAW | — | 75 | — | pF | f = 1 MHz |
| Capacitance (Pw) | CW | — | 120 | — | pF | f = 1 MHz |
| Capacitance (PB) | CBW | — | 75 | — | pF | f = 1 MHz |
"""


def test_a_label_naming_only_the_head_noun_is_chosen_by_the_symbol_that_spells_the_rest() -> None:
    decision = decide(parse_request("Wiper capacitance", "pF", ["f = 1 MHz"]), _evidence(SIBLING_CAPACITANCES))
    assert _values(decision) == (None, 120.0, None, "pF")
    assert decision.confidence >= 0.5
    # Without a symbol to tell the siblings apart, a head noun alone is not enough to answer.
    no_symbols = SIBLING_CAPACITANCES.replace("CAW", "").replace("CBW", "").replace("| CW |", "|  |")
    assert decide(parse_request("Wiper capacitance", "pF", []), _evidence(no_symbols)).best is None


def test_symbol_spelling_uses_each_word_once_and_no_foreign_letter() -> None:
    from app.agent.offline.reader import spells_name

    assert spells_name("Rthjc", "Thermal resistance junction to case")
    assert not spells_name("Rthja", "Thermal resistance junction to case")
    assert not spells_name("CAW", "Wiper capacitance")
    assert not spells_name("CWW", "Wiper capacitance")


THERMAL = """
| Symbol | Parameter | Value | Unit |
|---|---|---|---|
| Rthja | Thermal resistance junction to ambient SO8 | 125 | °C/W |
| Rthja | DIP8 | 85 | °C/W |
| Rthjc | Thermal resistance junction to case SO8 | 40 | °C/W |
| Rthjc | DIP8 | 41 | °C/W |
"""


def test_a_synonym_inside_a_longer_name_keeps_the_rest_of_the_name_required() -> None:
    query = parse_request("Thermal resistance junction to case, DIP8")
    assert "thermal resistance junction to ambient junction to case" in query.phrases
    decision = decide(query, _evidence(THERMAL))
    assert decision.best is not None and 41.0 in decision.best.candidate.values()


STEPPED_TIMING = """
| Parameter | Sym | Min | Typ | Max | Units | Conditions |
|---|---|---|---|---|---|---|
| SCK input high time | TscH | 45 | — | — | ns | VDD = 2.7V to 5.5V |
| SCK input high time | TscH | 500 | — | — | ns | VDD = 1.8V to 2.7V |
"""


def test_a_condition_phrase_in_the_name_picks_the_row() -> None:
    query = parse_request("SCK high time at VDD 1.8 V to 2.7 V")
    assert query.core == "SCK high time" and query.qualifiers == ["VDD 1.8 V to 2.7 V"]
    assert _values(decide(query, _evidence(STEPPED_TIMING))) == (500.0, None, None, "ns")
    assert parse_request("Output current @ 5 V").qualifiers == ["5 V"]
    assert parse_request("Current for operation").core == "Current for operation"


def test_prose_limit_wording_sets_the_field() -> None:
    lines = ["Tachometer output", "When using a 12V fan a resistor value of 2.7 kΩ or larger is suitable.",
             "The supply ripple must be not more than 50 mV peak to peak."]
    resistor = decide(parse_request("Fan resistor", "kohm"), _evidence("", lines=lines))
    ripple = decide(parse_request("Supply ripple", "mV"), _evidence("", lines=lines))
    assert _values(resistor)[:3] == (2.7, None, None)
    assert _values(ripple)[:3] == (None, None, 50.0)


def test_words_after_between_qualify_the_head_and_weigh_less() -> None:
    lines = ["The signal transmission distance is up to 120 cm."]
    decision = decide(parse_request("Signal transmission distance between two repeaters", "cm"),
                      _evidence("", lines=lines))
    assert decision.best is not None and _values(decision)[:3] == (None, None, 120.0)


def test_a_first_row_of_bare_conditions_heads_the_variant_columns() -> None:
    markdown = """
| PUMP DATA |  | 5V | 48V |
|---|---|---|---|
| Rated voltage | V | 5 | 48 |
| Rated flow | l/min | 1.5 | 2.25 |
| Holding current | mA | 310 | 42 |
"""
    high = decide(parse_request("Rated flow (48V version)", "l/min", ["48V"]), _evidence(markdown))
    low = decide(parse_request("Holding current", "mA", ["5 V"]), _evidence(markdown))
    assert _values(high)[1] == 2.25
    assert _values(low)[1] == 310
    # The header row is not itself read as a row of values.
    assert all(s.candidate.label.strip() != "PUMP DATA" for s in high.alternatives)


def test_a_block_of_labels_beside_a_block_of_values_pairs_them_in_order() -> None:
    lines = ["Pump X7 industrial", "2.4 l/min", "Ceramic", "9 W / 24 V", "1800 RPM", "38 dB(A)",
             "Nominal flow", "Seal material", "Input power / voltage", "Max. pump speed (+/-5%)", "Noise level",
             "Rev. 3, 2024"]
    evidence = Evidence()
    evidence.page_lines[2] = lines
    speed = decide(parse_request("Maximum pump speed", "rpm"), evidence)
    flow = decide(parse_request("Nominal flow", "l/min"), evidence)
    assert _values(speed) == (None, None, 1800.0, "rpm")
    assert _values(flow)[1] == 2.4
    # Two label lines after two values are as likely a heading and a caption: not read as a block.
    evidence.page_lines[2] = ["1800 RPM", "38 dB(A)", "Max. pump speed (+/-5%)", "Noise level"]
    assert decide(parse_request("Maximum pump speed", "rpm"), evidence).best is None


def test_a_count_word_one_word_after_the_value_is_its_unit() -> None:
    evidence = Evidence()
    evidence.page_lines[1] = ["Mechanical Life ............ 50,000 switching cycles"]
    decision = decide(parse_request("Mechanical life"), evidence)
    assert _values(decision) == (None, 50000.0, None, "cycles")


def test_the_section_title_above_a_table_places_it_when_the_page_text_lists_all_headings_first() -> None:
    markdown = """
| Parameter | Blue | Units |
|---|---|---|
| Forward Current | 25 | mA |
| Reverse Voltage | 5 | V |
"""
    lines = ["Absolute Maximum Ratings at TA=25°C", "Electrical Characteristics at TA=25°C", "Forward Current",
             "25", "Reverse Voltage", "5"]
    request = parse_request("Forward current (absolute maximum)", "mA")
    scrambled = _evidence(markdown, lines=lines)
    assert decide(request, scrambled).best is None or decide(request, scrambled).best.candidate.max is None
    for table in scrambled.tables[3]:
        table.caption = "Absolute Maximum Ratings at TA=25°C"
    assert _values(decide(request, scrambled)) == (None, None, 25.0, "mA")


def test_a_footnote_mark_in_a_row_name_brings_the_note_text_as_its_conditions() -> None:
    markdown = """
| Parameter | Rating | Units |
|---|---|---|
| Pulsed Current [2] | 900 | mA |
| Pulsed Current [3] | 400 | mA |
"""
    lines = ["Notes:", "1. Free air.", "2. 1/20 duty cycle, 50us pulse width.", "3. Continuous, heat sink attached."]
    evidence = _evidence(markdown, lines=lines)
    assert _values(decide(parse_request("Pulsed current", "mA", ["1/20 duty cycle"]), evidence))[1] == 900
    assert _values(decide(parse_request("Pulsed current", "mA", ["heat sink"]), evidence))[1] == 400


def test_a_row_of_one_symbol_whose_name_cell_is_only_conditions_measures_the_quantity_named_above() -> None:
    markdown = """
| Symbol | Parameter | Min. | Typ. | Max. | Unit |
|---|---|---|---|---|---|
| IOL | Output low current VDD = 5 V, VO = 0.4 V | 8 | 15 |  | mA |
| IOL | Tmin < Tamb < Tmax | 6 |  |  | mA |
| IOL | VDD = 5 V, VO = 0.1 V | 90 | 200 |  | µA |
| VOH | Output high voltage RL = 1 kΩ | 4.6 |  |  | V |
"""
    low = decide(parse_request("Output low current at VO = 0.1 V", "uA", ["VO = 0.1 V"]), _evidence(markdown))
    assert _values(low) == (90.0, 200.0, None, "uA")
    assert "VO = 0.1 V" in low.reason
    plain = decide(parse_request("Output low current", "mA"), _evidence(markdown))
    assert _values(plain) == (8.0, 15.0, None, "mA")


def test_requested_conditions_compare_set_values_as_numbers_in_si() -> None:
    markdown = """
| Parameter | Conditions | Min | Typ | Max | Unit |
|---|---|---|---|---|---|
| Output current | VO = 2 V, VDD = 5 V | 20 | 30 |  | mA |
| Output current | VO = 200 mV, VDD = 5 V | 4 | 6 |  | mA |
"""
    # The text "VO=0.2V" is not printed, and "2 V" is contained in it: only the values tell the rows apart.
    decision = decide(parse_request("Output current", "mA", ["VO = 0.2 V"]), _evidence(markdown))
    assert _values(decision) == (4.0, 6.0, None, "mA")
    assert decision.best.conditions == 1.0
    other = next(s for s in decision.alternatives if s.candidate.min == 20.0)
    assert other.conditions == 0.0


def test_a_label_line_over_a_dot_leader_line_names_what_its_sub_label_qualifies() -> None:
    evidence = Evidence()
    evidence.page_lines[1] = [
        "Insulation Resistance (IEC 60512, Test 3a)",
        " 500 VDC ......................................... 1,000 megohms minimum",
        "Breakdown Voltage (IEC 60512, Test 4a)",
        " Room Temperature ................................ 750 VAC minimum",
    ]
    decision = decide(parse_request("Breakdown voltage", "V", ["room temperature"]), evidence)
    assert _values(decision) == (750.0, None, None, "V")


def test_hyphenated_words_match_the_same_words_written_apart() -> None:
    evidence = Evidence()
    evidence.page_lines[6] = ["Allowed on-time ratio 10% to 90%", "The signal is not inverted, 100% on time ratio."]
    decision = decide(parse_request("On time ratio range", "%"), evidence)
    assert _values(decision) == (10.0, None, 90.0, "%")
