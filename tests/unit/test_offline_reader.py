"""Reading tables and text lines, choosing among candidates, declining, and quoting verbatim."""

from __future__ import annotations

import pytest

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


@pytest.mark.parametrize(("quantity", "unit", "rows"), [
    ("Output power", "mW", [("VDD=6V, RL=8Ω", 250, 325), ("VDD=9V, RL=8Ω", 500, 700)]),
    ("Drive current", "mA", [("VCC=3.3V", 12, 18), ("VCC=5V", 20, 31)]),
    ("Carrier frequency", "kHz", [("MODE=A", 31, 36), ("MODE=B", 54, 58), ("MODE=C", 71, 75)]),
])
def test_multi_line_cells_are_paired_line_by_line(quantity: str, unit: str, rows: list[tuple]) -> None:
    joined = ["<br>".join(str(row[i]) for row in rows) for i in range(3)]
    markdown = ("| Parameter | Symbol | Conditions | Min | Typ | Max | Unit |\n|---|---|---|---|---|---|---|\n"
                f"| {quantity} | QX | {joined[0]} | {joined[1]} | {joined[2]} |  | "
                + "<br>".join([unit] * len(rows)) + " |\n")
    for condition, low, typical in rows:
        decision = decide(parse_request(quantity, unit, [condition.split(",")[0]]), _evidence(markdown))
        assert _values(decision) == (float(low), float(typical), None, unit)


def test_unit_dimension_rules_out_rows_of_another_quantity() -> None:
    # "Supply voltage rejection ratio" names the words of the request, but its value is in dB, not volts.
    markdown = ("| Parameter | Symbol | Typ | Unit |\n|---|---|---|---|\n"
                "| Supply voltage rejection ratio | PSRR | 80 | dB |\n")
    decision = decide(parse_request("Supply voltage"), _evidence(markdown))
    assert decision.best is None
    assert "declin" in decision.reason or "no table row" in decision.reason


def test_the_head_noun_of_a_terse_name_says_the_quantity_its_value_must_have() -> None:
    # Asked by name alone: a row of the words "Gadget isolation resistance" printed in volts is the test voltage
    # beside it, and "Toggle dissipation capacitance" is a capacitance though "dissipation" names a power.
    markdown = ("| Parameter | Symbol | Typ | Unit |\n|---|---|---|---|\n"
                "| Gadget isolation resistance test | VISO | 350 | V |\n"
                "| Gadget isolation resistance | RISO | 80 | MΩ |\n"
                "| Toggle power dissipation | PTG | 420 | mW |\n"
                "| Toggle power dissipation capacitance | CTG | 31 | pF |\n")
    assert _values(decide(parse_request("Gadget isolation resistance"), _evidence(markdown))) == (
        None, 80.0, None, "Mohm")
    volts_only = ("| Parameter | Symbol | Typ | Unit |\n|---|---|---|---|\n"
                  "| Gadget isolation resistance | VISO | 350 | V |\n")
    assert decide(parse_request("Gadget isolation resistance"), _evidence(volts_only)).best is None
    assert parse_request("Toggle power dissipation capacitance").dimensions == {
        parse_request("Toggle capacitance", "pF").unit.dimension}
    assert _values(decide(parse_request("Toggle power dissipation capacitance"), _evidence(markdown))) == (
        None, 31.0, None, "pF")
    # Words after a preposition qualify the head before it: a tolerance over temperature is no temperature.
    assert parse_request("Ratio of change in gadget voltage to change in toggle voltage").dimensions == set()
    assert parse_request("Gadget voltage tolerance over temperature").dimensions == set()
    assert parse_request("Gadget resistance tempco").dimensions == {"tempco"}
    assert parse_request("Gadget weight including packaging").dimensions == {"[mass]"}
    # A concept whose phrasing holds the head noun keeps its own dimension ("thermal resistance" in K/W).
    assert parse_request("Thermal resistance junction to case").dimensions == {"thermal_resistance"}


def test_a_row_negating_a_word_of_the_name_is_the_opposite_quantity() -> None:
    markdown = ("| Parameter | Symbol | Conditions | Min | Typ | Max | Unit |\n|---|---|---|---|---|---|---|\n"
                "| Wobble non-trigger current | IWNT | QZ = 7 V, mode 2 | 0.4 |  |  | mA |\n"
                "| Wobble trigger current | IWT | QZ = 7 V |  | 3.1 | 9 | mA |\n")
    # The negated row names the requested mode, the other does not: still, it is not the quantity asked for.
    assert _values(decide(parse_request("Wobble trigger current in mode 2"), _evidence(markdown))) == (
        None, 3.1, 9.0, "mA")
    alone = markdown.rsplit("\n", 2)[0] + "\n"
    assert decide(parse_request("Wobble trigger current in mode 2"), _evidence(alone)).best is None
    # Asked for, the negated quantity is found as before.
    assert _values(decide(parse_request("Wobble non-trigger current"), _evidence(markdown))) == (
        0.4, None, None, "mA")


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


@pytest.mark.parametrize(("line", "name", "unit", "expected"), [
    ("Target sampling rate: 48kHz, acceptable range 44kHz to 52kHz", "Sampling rate", "kHz", (44.0, 48.0, 52.0)),
    ("Target pulse width: 120 us, acceptable range 90 us to 150 us", "Pulse width", "us",
     (90.0, 120.0, 150.0)),
    pytest.param("Target line speed: 120 m/min, acceptable range 90 m/min to 150 m/min", "Line speed", "m/min",
                 (90.0, 120.0, 150.0),
                 marks=pytest.mark.xfail(strict=True, reason="the reader knows no unit m/min: a bare typical 120")),
    ("Nominal bias: 2.5V, acceptable range 2.2V to 2.9V", "Bias", "V", (2.2, 2.5, 2.9)),
])
def test_feature_line_with_nominal_and_range_reads_as_one_value(line: str, name: str, unit: str,
                                                                 expected: tuple) -> None:
    evidence = Evidence(page_lines={2: ["Control input", line]})
    assert _values(decide(parse_request(name, unit), evidence)) == (*expected, unit)


@pytest.mark.parametrize(("line", "name", "unit", "value"), [
    ("12mA drive current per segment.", "Drive current per segment", "mA", 12.0),
    ("3.5W heater power per zone.", "Heater power per zone", "W", 3.5),
    ("40us settling time per step.", "Settling time per step", "us", 40.0),
])
def test_value_named_after_it_on_a_feature_line(line: str, name: str, unit: str, value: float) -> None:
    evidence = Evidence(page_lines={1: ["Highlights", line, "Ships in reels of 500."]})
    decision = decide(parse_request(name, unit), evidence)
    assert _values(decision) == (None, value, None, unit)
    assert decision.quote == line


MATRIX = """
| Model | Step Angle (deg) | Rated Current (A) | Phase Resistance (ohm) |
|---|---|---|---|
| QM-210 | 0.9 | 0.45 | 11 |
| QM-330 | 0.9 | 2.1 | 0.8 |
| QM-450 | 1.8 | 3.3 | 0.35 |
"""


@pytest.mark.parametrize(("name", "unit", "model", "value"), [
    ("Rated current", "A", "QM-330", 2.1),
    ("Rated current", "A", "QM-450", 3.3),
    ("Phase resistance", "ohm", "QM-210", 11.0),
    ("Step angle", "deg", "QM-450", 1.8),
])
def test_matrix_table_cell_chosen_by_row_and_column(name: str, unit: str, model: str, value: float) -> None:
    decision = decide(parse_request(name, unit, [model]), _evidence(MATRIX, 1))
    assert _values(decision) == (None, value, None, unit)


def test_name_wrapped_over_rows_sharing_a_symbol_and_headerless_continuation() -> None:
    first = "| Parameters | Sym | Min | Typ | Max | Units | Conditions |\n|---|---|---|---|---|---|---|\n" \
            "| Track resistance | RTK | 1.6 | 2 | 2.4 | kΩ | -202 variants |\n" \
            "| (± 20%) | RTK | 40 | 50 | 60 | kΩ | -503 variants |\n"
    continuation = "|  |  |  |  |  |  |  |\n|---|---|---|---|---|---|---|\n" \
                   "| Contact Resistance | RC | — | 40 | 95 | Ω | VCC = 3.3 V |\n"
    evidence = Evidence()
    evidence.tables[4] = parse_markdown_tables(first + "\n" + continuation, 4)
    assert len(evidence.tables[4]) == 2
    fifty_k = decide(parse_request("Track resistance (RTK), 50 kΩ option", "kohm", ["-503 variants"]), evidence)
    contact = decide(parse_request("Contact resistance", "ohm"), evidence)
    assert _values(fifty_k) == (40.0, 50.0, 60.0, "kohm")
    assert _values(contact) == (None, 40.0, 95.0, "ohm")


@pytest.mark.parametrize(("symbol", "name", "cells", "unit", "expected"), [
    ("Idrv", "Gate drive current VCC = 12 V", "15 | 25 | 35 mA", "mA", (15.0, 25.0, 35.0)),
    ("Vref", "Reference voltage TA = 25 °C", "1.19 | 1.2 | 1.21 V", "V", (1.19, 1.2, 1.21)),
    ("Fosc", "Oscillator frequency", "180 | 200 | kHz", "kHz", (180.0, 200.0, None)),
])
def test_merged_max_unit_header_carries_the_unit_in_the_cell(symbol: str, name: str, cells: str, unit: str,
                                                             expected: tuple) -> None:
    markdown = ("| Symbol | Parameter | Min. | Typ. | Max. Unit |\n|---|---|---|---|---|\n"
                f"| {symbol} | {name} | {cells} |\n| Xother | Something else | 1 | 2 | 3 mA |\n")
    found, _roles = table_candidates(Table(7, parse_markdown_tables(markdown, 7)[0].rows))
    candidate = next(c for c in found if c.symbol == symbol)
    assert (candidate.min, candidate.typical, candidate.max, candidate.unit.canonical) == (*expected, unit)


@pytest.mark.parametrize(("rows", "name", "unit", "expected"), [
    ([("Standby Current", "ISB", "VCC=3V", "—", "1.5", "4", "µA"), ("Core Voltage", "VCORE", "", "1.1", "—", "1.3",
                                                                       "V")],
     "Standby current", "uA", (None, 1.5, 4.0)),
    ([("Core Voltage", "VCORE", "", "1.1", "—", "1.3", "V"), ("Standby Current", "ISB", "VCC=3V", "—", "1.5", "4",
                                                             "µA")],
     "Core voltage", "V", (1.1, None, 1.3)),
    ([("Wake-up Time", "TWU", "from sleep", "—", "35", "80", "µs")], "Wake-up time", "us", (None, 35.0, 80.0)),
])
def test_text_layer_table_rows_one_cell_per_line(rows: list[tuple], name: str, unit: str, expected: tuple) -> None:
    lines = ["ELECTRICAL CHARACTERISTICS", "PARAMETER", "SYMBOL", "CONDITIONS", "MIN", "TYP", "MAX", "UNIT"]
    for row in rows:
        lines += [cell for cell in row if cell]
    evidence = Evidence(page_lines={3: lines})
    assert _values(decide(parse_request(name, unit), evidence)) == (*expected, unit)


@pytest.mark.parametrize(("name", "cell", "expected"), [
    ("Enable input voltage", "-0.5V～VCC+0.3", -0.5),
    ("Sense pin voltage", "-0.2V～VDD+0.5", -0.2),
])
def test_bound_to_a_symbol_is_a_limit_not_an_offset(name: str, cell: str, expected: float) -> None:
    markdown = f"| Parameter | Symbol | Ratings | Unit |\n|---|---|---|---|\n| {name} | VX | {cell} | V |\n"
    assert _values(decide(parse_request(name, "V"), _evidence(markdown, 2))) == (expected, None, None, "V")


def test_unit_in_the_column_header_or_the_parameter_name() -> None:
    header_unit = "| Parameter | Min (V) | Max (V) |\n|---|---|---|\n| Supply voltage | 1.8 | 3.6 |\n"
    name_unit = "| Parameter | Min | Typ | Max |\n|---|---|---|---|\n| Supply current (mA) | | 1.2 | 2.0 |\n"
    assert _values(decide(parse_request("Supply voltage"), _evidence(header_unit))) == (1.8, None, 3.6, "V")
    assert _values(decide(parse_request("Supply current"), _evidence(name_unit))) == (None, 1.2, 2.0, "mA")


@pytest.mark.parametrize(("asked", "expected"), [
    ("Storage temperature", (-50.0, None, 140.0, "degC")),
    ("Operating temperature", (-20.0, None, 70.0, "degC")),
])
def test_rows_sharing_a_symbol_keep_their_own_full_names(asked: str, expected: tuple) -> None:
    markdown = ("| Parameters | Sym | Min | Typ | Max | Units |\n|---|---|---|---|---|---|\n"
                "| Operating Temperature Range | TA | -20 | — | +70 | °C |\n"
                "| Storage Temperature Range | TA | -50 | — | +140 | °C |\n")
    assert _values(decide(parse_request(asked), _evidence(markdown, 9))) == expected


@pytest.mark.parametrize(("line", "name", "expected"), [
    ("Shaft speed (+/–5%) 1450 RPM", "Shaft speed", (None, 1450.0, None, "rpm")),
    ("Coil resistance (±7%) 68 Ω", "Coil resistance", (None, 68.0, None, "ohm")),
    ("Output voltage (+/-2%) 24 V", "Output voltage", (None, 24.0, None, "V")),
])
def test_tolerance_in_parentheses_is_not_the_value(line: str, name: str, expected: tuple) -> None:
    assert _values(decide(parse_request(name), Evidence(page_lines={1: [line]}))) == expected


def test_blank_lines_are_empty_cells_and_interleaved_rows_are_not_guessed() -> None:
    text = ("--- page 2 ---\nPARAMETER\nSYMBOL\nTEST CONDITIONS\nMIN\nTYP\nMAX\nUNIT\n"
            "Idle Current\nIIDLE\nVCC=12V, EN=0\n \n7\n15\nmA\n"
            "Loop Gain\nGL\nVCC=12V, f=2kHz\n22nF from pin 3 to pin 5\n \n31\n52\n \ndB\ndB\n")
    from app.agent.offline.policy import split_pages

    evidence = Evidence(page_lines=split_pages(text), cell_lines=split_pages(text, keep_blank=True))
    assert _values(decide(parse_request("Idle current", "mA"), evidence)) == (None, 7.0, 15.0, "mA")
    # Two condition lines over two value lines: which value belongs to which line is not printed, so no answer.
    gain = decide(parse_request("Loop gain", "dB"), evidence)
    assert gain.best is None and "declining" in gain.reason


@pytest.mark.parametrize(("lines", "name", "unit", "quote"), [
    (["47 kΩ – Bias Resistance", "FIGURE 3-7: Bias resistance vs. supply.", "Bias resistance 47 kΩ ±10%"],
     "Bias resistance", "kohm", "Bias resistance 47 kΩ ±10%"),
    (["Fig. 12: Ripple current vs. load.", "Ripple current 80 mA max"], "Ripple current", "mA",
     "Ripple current 80 mA max"),
])
def test_figure_captions_rank_below_specifications(lines: list[str], name: str, unit: str, quote: str) -> None:
    assert decide(parse_request(name, unit), Evidence(page_lines={20: lines})).quote == quote


def test_number_in_the_name_picks_the_row_with_that_number() -> None:
    # One cell per line, as a text layer prints a timing table.
    lines = ["Frame Timing", "TA1", "1 mark, pulse width", "140ns~260ns",
             "TA2", "2 mark, pulse width", "410ns~690ns", "TA3", "3 mark, pulse width", "900ns~1.2µs"]
    answers = {n: decide(parse_request(f"{n} mark pulse width", "ns"), Evidence(page_lines={3: lines}))
               for n in (1, 2, 3)}
    assert _values(answers[1]) == (140.0, None, 260.0, "ns")
    assert _values(answers[2]) == (410.0, None, 690.0, "ns")
    assert _values(answers[3]) == (900.0, None, 1200.0, "ns")


def test_limit_named_in_the_column_header_sets_the_field() -> None:
    markdown = ("| Model | Clamp Force (N Min) | Backlash (deg Max) | Rated Current (A) |\n"
                "|---|---|---|---|\n| GX-10 | 300 | 15 | 0.8 |\n| GX-20 | 450 | 9 | 1.1 |\n")
    clamp = decide(parse_request("Clamp force", "N", ["GX-20"]), _evidence(markdown, 1))
    backlash = decide(parse_request("Backlash", "deg", ["GX-10"]), _evidence(markdown, 1))
    current = decide(parse_request("Rated current", "A", ["GX-20"]), _evidence(markdown, 1))
    assert _values(clamp) == (450.0, None, None, "N")
    assert _values(backlash) == (None, None, 15.0, "deg")
    assert _values(current) == (None, 1.1, None, "A")


@pytest.mark.parametrize(("line", "name", "expected"), [
    ("Logic low accepted up to: VIL=0,6V", "Low-level input voltage", (None, None, 0.6, "V")),
    ("Minimum voltage for logic high: VIH=2,4V", "High-level input voltage", (2.4, None, None, "V")),
])
def test_logic_level_vocabulary_and_symbol(line: str, name: str, expected: tuple) -> None:
    evidence = Evidence(page_lines={4: ["Enable input", line, "Input capacitance: Cin=10pF"]})
    assert _values(decide(parse_request(name, "V"), evidence)) == expected


@pytest.mark.parametrize(("line", "asked", "value"), [
    ("The controller offers 24 relay outputs, 8 isolated inputs, 2 CAN buses (one with termination)",
     "Number of isolated inputs", 8.0),
    ("The controller offers 24 relay outputs, 8 isolated inputs, 2 CAN buses (one with termination)",
     "Number of relay outputs", 24.0),
    ("Each module has 6 thermocouple channels and 3 alarm relays", "Number of thermocouple channels", 6.0),
])
def test_count_is_the_number_printed_before_the_things_counted(line: str, asked: str, value: float) -> None:
    decision = decide(parse_request(asked), Evidence(page_lines={1: [line]}))
    assert decision.best is not None and decision.best.candidate.typical == value


@pytest.mark.parametrize(("asked", "expected"), [
    ("Maximum flow", (None, None, 64.5, "m3/h")),
    ("Minimum flow", (8.25, None, None, "m3/h")),
    ("Nominal speed", (None, 2200.0, None, "rpm")),
    ("Maximum pressure", (None, None, 3.5, "bar")),
])
def test_a_row_named_with_a_limit_word_gives_that_limit_and_answers_a_request_leading_with_it(
        asked: str, expected: tuple) -> None:
    markdown = ("| Item | Value |\n|---|---|\n| Max. flow | 64.5 m³/h |\n| Min. flow | 8.25 m³/h |\n"
                "| Nominal speed | 2200 RPM |\n| Max. pressure | 3.5 bar |\n")
    assert _values(decide(parse_request(asked), _evidence(markdown, 1))) == expected


@pytest.mark.parametrize(("variant", "expected"), [
    ("AMBER", (30.0, 45.0, 60.0)),
    ("CYAN", (120.0, 150.0, 190.0)),
])
def test_a_group_title_merged_into_the_first_sub_header_cell_still_gives_the_column_roles(
        variant: str, expected: tuple) -> None:
    titled = ("| Parameter | Symbol | Color | Test current: <1mA Min. | Typ. | Max. | Unit |\n"
              "|---|---|---|---|---|---|---|\n"
              "| Luminous intensity | IV | AMBER | 30 | 45 | 60 | mcd |\n"
              "| Luminous intensity | IV | CYAN | 120 | 150 | 190 | mcd |\n")
    decision = decide(parse_request("Luminous intensity", None, [variant]), _evidence(titled, 3))
    assert _values(decision) == (*expected, "mcd")


def test_columns_headed_only_by_the_conventional_symbol_name_the_value_with_less_confidence() -> None:
    guide = ("| Part No. | Lens Type | Iv (mcd) @ 5mA Min. Typ. |  | Angle |\n|---|---|---|---|---|\n"
             "| QL-880 | AMBER CLEAR | 14 | 35 | 60° |\n")
    named = ("| Parameter | Conditions | Min. | Typ. | Unit |\n|---|---|---|---|---|\n"
             "| Luminous intensity | @ 5mA | 14 | 35 | mcd |\n")
    by_symbol = decide(parse_request("Luminous intensity", None, ["@ 5mA"]), _evidence(guide, 2))
    by_name = decide(parse_request("Luminous intensity", None, ["@ 5mA"]), _evidence(named, 2))
    assert _values(by_symbol) == (14.0, 35.0, None, "mcd")
    assert by_symbol.confidence < by_name.confidence
    # The symbol of another quantity does not name it.
    assert decide(parse_request("Forward voltage"), _evidence(guide, 2)).best is None


def test_a_tolerance_in_a_numbered_note_is_not_the_value() -> None:
    lines = ["Notes:", "1. Peak wavelength: +/-2nm.", "2. Output Voltage: +/-0.05V.",
             "Typ.", "Max.", "Output Voltage", "3.3", "3.4", "V", "IO=50mA"]
    decision = decide(parse_request("Output voltage", "V", ["IO=50mA"]), Evidence(page_lines={2: lines}))
    assert _values(decision) == (None, 3.3, 3.4, "V")
    assert decision.best.conditions == 1.0


GRADES = ("| Symbol | Parameter | Min. | Typ. | Max. | Unit |\n|---|---|---|---|---|---|\n"
          "| Ib | Input bias current QR71A | | | 40 | nA |\n"
          "| Ib | QR72A, QR73A | | 15 | 60 | nA |\n"
          "| Ib | QR73 | | 25 | 90 | nA |\n")


def test_a_row_that_is_one_part_grade_of_several_yields_to_an_ungraded_statement() -> None:
    evidence = _evidence(GRADES, 6)
    evidence.page_lines[1] = ["Features", "Low input bias current: 15 nA"]
    assert _values(decide(parse_request("Input bias current"), evidence)) == (None, 15.0, None, "nA")
    alone = decide(parse_request("Input bias current"), _evidence(GRADES, 6))
    named = decide(parse_request("Input bias current", None, ["QR71A"]), _evidence(GRADES, 6))
    assert "part grades" in alone.reason and alone.confidence < named.confidence


@pytest.mark.parametrize(("label", "field"), [("Rate (approx., max.)", "max"), ("Rate (approx.)", "typical")])
def test_a_label_above_naming_the_limit_in_parentheses_sets_the_field_of_the_values_below(
        label: str, field: str) -> None:
    lines = ["Scanner", label, "*2", "Scan rate: Fast: 42 Hz, Slow: 9 Hz", "Mass", "Approx. 1.2 kg"]
    decision = decide(parse_request("Scan rate", None, ["Fast"]), Evidence(page_lines={1: lines}))
    expected = {"min": None, "typical": None, "max": None, field: 42.0}
    assert _values(decision) == (expected["min"], expected["typical"], expected["max"], "Hz")


def test_a_unit_cell_printed_before_the_value_cell_is_its_unit_and_the_tolerance_after_it_is_not_the_value() -> None:
    lines = ["SPECIFICATION", "UNIT", "VALUE", "Transmittance, TR*", "%", "71.5 +/- 3", "(450-650nm)",
             "Reflectance, RF*", "%", "4.2"]
    decision = decide(parse_request("Transmittance", None, ["450-650nm"]), Evidence(page_lines={1: lines}))
    assert _values(decision) == (None, 71.5, None, "%")
    assert decision.best.conditions == 1.0


SIBLING_LEAKAGES = """
| Parameters | Sym | Min | Typ | Max | Units | Conditions |
|---|---|---|---|---|---|---|
| Leakage (PA) | LAS | — | 3 | — | nA | VR = 10 V |
| Leakage (Ps) | LS | — | 7 | — | nA | VR = 10 V |
| Leakage (PB) | LBS | — | 3 | — | nA | VR = 10 V |
"""


def test_a_label_naming_only_the_head_noun_is_chosen_by_the_symbol_that_spells_the_rest() -> None:
    decision = decide(parse_request("Shunt leakage", "nA", ["VR = 10 V"]), _evidence(SIBLING_LEAKAGES))
    assert _values(decision) == (None, 7.0, None, "nA")
    assert decision.confidence >= 0.5
    # Without a symbol to tell the siblings apart, a head noun alone is not enough to answer.
    no_symbols = SIBLING_LEAKAGES.replace("LAS", "").replace("LBS", "").replace("| LS |", "|  |")
    assert decide(parse_request("Shunt leakage", "nA", []), _evidence(no_symbols)).best is None


def test_symbol_spelling_uses_each_word_once_and_no_foreign_letter() -> None:
    from app.agent.offline.reader import spells_name

    assert spells_name("Rthjc", "Thermal resistance junction to case")
    assert not spells_name("Rthja", "Thermal resistance junction to case")
    assert spells_name("LS", "Shunt leakage")
    assert not spells_name("LAS", "Shunt leakage")
    assert not spells_name("LSS", "Shunt leakage")


THERMAL = """
| Symbol | Parameter | Value | Unit |
|---|---|---|---|
| Rthja | Thermal resistance junction to ambient QFN16 | 62 | °C/W |
| Rthja | SOIC16 | 98 | °C/W |
| Rthjc | Thermal resistance junction to case QFN16 | 9 | °C/W |
| Rthjc | SOIC16 | 27 | °C/W |
"""


def test_a_synonym_inside_a_longer_name_keeps_the_rest_of_the_name_required() -> None:
    query = parse_request("Thermal resistance junction to case, SOIC16")
    assert "thermal resistance junction to ambient junction to case" in query.phrases
    decision = decide(query, _evidence(THERMAL))
    assert decision.best is not None and 27.0 in decision.best.candidate.values()


STEPPED_TIMING = """
| Parameter | Sym | Min | Typ | Max | Units | Conditions |
|---|---|---|---|---|---|---|
| CLK pulse low time | TCL | 60 | — | — | ns | VCC = 3.0V to 5.5V |
| CLK pulse low time | TCL | 350 | — | — | ns | VCC = 2.0V to 3.0V |
"""


def test_a_condition_phrase_in_the_name_picks_the_row() -> None:
    query = parse_request("CLK low time at VCC 2.0 V to 3.0 V")
    assert query.core == "CLK low time" and query.qualifiers == ["VCC 2.0 V to 3.0 V"]
    assert _values(decide(query, _evidence(STEPPED_TIMING))) == (350.0, None, None, "ns")
    assert parse_request("Output current @ 5 V").qualifiers == ["5 V"]
    assert parse_request("Current for operation").core == "Current for operation"
    assert parse_request("Standby current in 3.3 V operation").qualifiers == ["3.3 V operation"]
    assert parse_request("Gain error over -40 C to 85 C").core == "Gain error"
    assert parse_request("Current in operation").core == "Current in operation"


@pytest.mark.parametrize(("line", "name", "unit", "expected"), [
    ("For a 24V coil a series resistor of 1.5 kΩ or larger is suitable.", "Series resistor", "kohm",
     (1.5, None, None)),
    ("The input ripple must be not more than 120 mV peak to peak.", "Input ripple", "mV", (None, None, 120.0)),
    ("The settling time must be not more than 15 ms after a step.", "Settling time", "ms", (None, None, 15.0)),
])
def test_prose_limit_wording_sets_the_field(line: str, name: str, unit: str, expected: tuple) -> None:
    decision = decide(parse_request(name, unit), _evidence("", lines=["Wiring notes", line]))
    assert _values(decision)[:3] == expected


def test_words_after_between_qualify_the_head_and_weigh_less() -> None:
    lines = ["The link reach is up to 80 cm."]
    decision = decide(parse_request("Link reach between two hubs", "cm"), _evidence("", lines=lines))
    assert decision.best is not None and _values(decision)[:3] == (None, None, 80.0)


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
    lines = ["Blower K9 compact", "14.2 m³/h", "Aluminium", "4 W / 12 V", "5200 RPM", "29 dB(A)",
             "Air flow", "Housing material", "Input power / voltage", "Max. blower speed (+/-8%)", "Noise level",
             "Issue 3, 2025"]
    evidence = Evidence()
    evidence.page_lines[2] = lines
    speed = decide(parse_request("Maximum blower speed", "rpm"), evidence)
    flow = decide(parse_request("Air flow", "m3/h"), evidence)
    assert _values(speed) == (None, None, 5200.0, "rpm")
    assert _values(flow)[1] == 14.2
    # Two label lines after two values are as likely a heading and a caption: not read as a block.
    evidence.page_lines[2] = ["5200 RPM", "29 dB(A)", "Max. blower speed (+/-8%)", "Noise level"]
    assert decide(parse_request("Maximum blower speed", "rpm"), evidence).best is None


@pytest.mark.parametrize(("line", "name", "expected"), [
    ("Contact Life ............ 250,000 switching cycles", "Contact life", (None, 250000.0, None, "cycles")),
    ("Electrical Life ............ 80,000 operations cycles", "Electrical life", (None, 80000.0, None, "cycles")),
])
def test_a_count_word_one_word_after_the_value_is_its_unit(line: str, name: str, expected: tuple) -> None:
    evidence = Evidence()
    evidence.page_lines[1] = [line]
    assert _values(decide(parse_request(name), evidence)) == expected


@pytest.mark.parametrize("other_heading", [
    "Electrical Characteristics at TA=25°C",
    pytest.param("Optical Characteristics at TA=25°C", marks=pytest.mark.xfail(
        strict=True, reason="only an 'Electrical Characteristics' heading competes with the ratings heading; "
                            "under 'Optical Characteristics' the table is placed in the ratings section")),
])
def test_the_section_title_above_a_table_places_it_when_the_page_text_lists_all_headings_first(
        other_heading: str) -> None:
    markdown = """
| Parameter | Amber | Units |
|---|---|---|
| Drive Current | 60 | mA |
| Reverse Voltage | 4 | V |
"""
    lines = ["Absolute Maximum Ratings at TA=25°C", other_heading, "Drive Current",
             "60", "Reverse Voltage", "4"]
    request = parse_request("Drive current (absolute maximum)", "mA")
    scrambled = _evidence(markdown, lines=lines)
    # Which heading the table sits under is not in the text: no answer rather than a guess.
    assert decide(request, scrambled).best is None
    for table in scrambled.tables[3]:
        table.caption = "Absolute Maximum Ratings at TA=25°C"
    assert _values(decide(request, scrambled)) == (None, None, 60.0, "mA")


def test_a_footnote_mark_in_a_row_name_brings_the_note_text_as_its_conditions() -> None:
    markdown = """
| Parameter | Rating | Units |
|---|---|---|
| Surge Current [2] | 1500 | mA |
| Surge Current [3] | 650 | mA |
"""
    lines = ["Notes:", "1. Still air.", "2. 1/50 duty cycle, 20us pulse width.", "3. Continuous, on copper pad."]
    evidence = _evidence(markdown, lines=lines)
    assert _values(decide(parse_request("Surge current", "mA", ["1/50 duty cycle"]), evidence))[1] == 1500
    assert _values(decide(parse_request("Surge current", "mA", ["copper pad"]), evidence))[1] == 650


def test_a_row_of_one_symbol_whose_name_cell_is_only_conditions_measures_the_quantity_named_above() -> None:
    markdown = """
| Symbol | Parameter | Min. | Typ. | Max. | Unit |
|---|---|---|---|---|---|
| IOH | Output high current VCC = 3.3 V, VO = 2.9 V | 4 | 9 |  | mA |
| IOH | Tmin < Tamb < Tmax | 3 |  |  | mA |
| IOH | VCC = 3.3 V, VO = 3.2 V | 150 | 400 |  | µA |
| VOL | Output low voltage RL = 2 kΩ | | | 0.3 | V |
"""
    near_rail = decide(parse_request("Output high current at VO = 3.2 V", "uA", ["VO = 3.2 V"]), _evidence(markdown))
    assert _values(near_rail) == (150.0, 400.0, None, "uA")
    assert "VO = 3.2 V" in near_rail.reason
    plain = decide(parse_request("Output high current", "mA"), _evidence(markdown))
    assert _values(plain) == (4.0, 9.0, None, "mA")


@pytest.mark.parametrize(("asked", "expected"), [("VS = 0.5 V", (3.0, 5.0)), ("VS = 500 mV", (3.0, 5.0)),
                                                 ("VS = 5 V", (40.0, 55.0))])
def test_requested_conditions_compare_set_values_as_numbers_in_si(asked: str, expected: tuple) -> None:
    markdown = """
| Parameter | Conditions | Min | Typ | Max | Unit |
|---|---|---|---|---|---|
| Sense current | VS = 5 V, VCC = 12 V | 40 | 55 |  | mA |
| Sense current | VS = 500 mV, VCC = 12 V | 3 | 5 |  | mA |
"""
    # "0.5 V" is not printed and "5 V" is contained in "VS = 500 mV"'s neighbour: only the values tell rows apart.
    decision = decide(parse_request("Sense current", "mA", [asked]), _evidence(markdown))
    assert _values(decision) == (*map(float, expected), None, "mA")
    assert decision.best.conditions == 1.0


@pytest.mark.parametrize(("lines", "name", "unit", "condition", "expected"), [
    (["Leakage Current (IEC 60990, Test 2b)", " 250 VAC ........................ 0.5 mA maximum",
      "Surge Voltage (IEC 61000, Test 5)", " Line to Earth ................... 2,000 V minimum"],
     "Surge voltage", "V", "line to earth", (2000.0, None, None)),
    (["Contact Resistance (EN 60512, Test 2a)", " Initial ........................ 20 megohms maximum"],
     "Contact resistance", "Mohm", "initial", (None, None, 20.0)),
    pytest.param(["Contact Resistance (EN 60512, Test 2a)", " Initial ................ 20 milliohms maximum"],
                 "Contact resistance", "mohm", "initial", (None, None, 20.0),
                 marks=pytest.mark.xfail(strict=True, reason="the reader knows no unit milliohms: a bare typical 20")),
])
def test_a_label_line_over_a_dot_leader_line_names_what_its_sub_label_qualifies(
        lines: list[str], name: str, unit: str, condition: str, expected: tuple) -> None:
    evidence = Evidence()
    evidence.page_lines[1] = lines
    assert _values(decide(parse_request(name, unit, [condition]), evidence)) == (*expected, unit)


@pytest.mark.parametrize(("line", "name", "expected"), [
    ("Allowed duty-cycle 5% to 95%", "Duty cycle range", (5.0, None, 95.0)),
    ("Permitted on-state ratio 20% to 80%", "On state ratio range", (20.0, None, 80.0)),
])
def test_hyphenated_words_match_the_same_words_written_apart(line: str, name: str, expected: tuple) -> None:
    evidence = Evidence()
    evidence.page_lines[6] = [line, "The output is not inverted."]
    assert _values(decide(parse_request(name, "%"), evidence)) == (*expected, "%")


@pytest.mark.parametrize(("quantity", "unit", "top", "bottom"), [
    ("conveyor speed", "RPM", 1750.0, 240.0),
    ("coolant flow", "l/min", 12.5, 1.5),
    ("line current", "mA", 850.0, 40.0),
])
def test_a_single_value_the_datasheet_calls_the_maximum_is_the_maximum(
        quantity: str, unit: str, top: float, bottom: float) -> None:
    """Whether or not the request repeats the limit word, "Max. conveyor speed 1750 RPM" is a maximum, and a
    request that leads with the limit word still finds the row named without it."""
    lines = ["Drive data", f"Max. {quantity} {top:g} {unit}", f"Min. {quantity} {bottom:g} {unit}"]

    def read(asked: str) -> tuple:
        best = decide(parse_request(asked), Evidence(page_lines={1: lines})).best
        assert best is not None, asked
        return best.candidate.min, best.candidate.typical, best.candidate.max

    assert read(f"Max. {quantity}") == (None, None, top)
    assert read(f"Maximum {quantity}") == (None, None, top)
    assert read(f"Minimum {quantity}") == (bottom, None, None)


WRAPPED_OVER_SUPPLIES = """
| Sym | Parameter | Cond | VCC | TA = 25°C Typ | | Guaranteed Limits | TA = -40 to 85°C TA = -55 to 125°C | Units |
|---|---|---|---|---|---|---|---|---|
| tLD | Maximum Latch Release | | 2.0V | 70 | 150 | 180 | 200 | ns |
| tLD | Delay, Set or Reset to Q | | 4.5V | 24 | 40 | 48 | 55 | ns |
| tLD | | | 6.0V | 20 | 31 | 37 | 42 | ns |
"""


def test_a_name_wrapped_over_supply_sub_rows_names_each_of_them() -> None:
    request = parse_request("Latch release delay, set or reset to Q", "ns", ["VCC = 4.5V", "TA = 25°C"])
    decision = decide(request, _evidence(WRAPPED_OVER_SUPPLIES))
    assert _values(decision) == (None, 24.0, 40.0, "ns")
    hot = decide(parse_request("Latch release delay, set or reset to Q", "ns", ["VCC = 4.5V", "TA = -40 to 85°C"]),
                 _evidence(WRAPPED_OVER_SUPPLIES))
    assert _values(hot) == (None, None, 48.0, "ns")


def test_an_ohm_sign_in_a_cell_is_the_unit_omega() -> None:
    markdown = """
| Symbol | Parameter | Conditions | Typ | Units |
|---|---|---|---|---|
| tPW | Output pulse width | CX = 30 pF RX = 2 k\u2126 | 410 | ns |
| tPW | Output pulse width | CX = 30 pF RX = 20 k\u2126 | 3.9 | us |
"""
    decision = decide(parse_request("Output pulse width", "ns", ["CX = 30 pF", "RX = 2 k\u03a9"]), _evidence(markdown))
    assert _values(decision) == (None, 410.0, None, "ns")


def test_a_limit_word_wrapped_onto_the_value_line_still_bounds_the_value() -> None:
    # "Up" ends one line of a feature bullet, "to 750mA" starts the next: the value is the most it delivers.
    evidence = Evidence(page_lines={1: ["Features", "Adjustable Trickle Output Current Up", "to 750mA",
                                        "Soft-Start Control"]})
    assert _values(decide(parse_request("Maximum trickle output current", "mA"), evidence)) == (None, None, 750.0,
                                                                                             "mA")
