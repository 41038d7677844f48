"""The typed table model: column roles, sections, sub-rows, footnotes and cell conventions, on invented tables."""

from __future__ import annotations

import pytest

from app.documents.cell_units import parse_unit_cell
from app.documents.cell_values import not_specified, read_cell
from app.documents.table_model import Role, RoleSource, build_table, header_role, split_footnote_marks

HEADER = ["Characteristic", "Symbol", "Test Conditions", "Min.", "Typ.", "Max.", "Units"]


def _row(model, name):  # noqa: ANN001, ANN202 - test helper
    return next(r for r in model.rows if r.name == name and not r.is_sub_row)


def _fields(row):  # noqa: ANN001, ANN202
    limits = row.limits
    return (limits.min, limits.typical, limits.max) if limits else None


@pytest.mark.parametrize(("text", "role"), [
    ("Min.", Role.MIN), ("Typ (V)", Role.TYP), ("MAXIMUM", Role.MAX), ("Test Conditions", Role.CONDITIONS),
    ("Values Min.", Role.MIN), ("Limits Max", Role.MAX), ("Max. Unit", Role.MAX), ("Units", Role.UNIT),
    ("Sym.", Role.SYMBOL), ("Characteristics", Role.PARAMETER), ("Quiver ratio", None),
])
def test_header_cells_name_their_role(text: str, role: Role | None) -> None:
    assert header_role(text) is role


def test_a_header_row_labels_columns_and_a_title_row_opens_a_section() -> None:
    model = build_table([HEADER, ["Drive Stage", "", "", "", "", "", ""],
                         ["Rail span", "VRS", "Loaded", "3.1", "–", "4.4", "V"]])
    assert model.roles.source is RoleSource.HEADER
    row = _row(model, "Rail span")
    assert _fields(row) == (3.1, None, 4.4)
    assert (row.symbol, row.conditions, row.section, row.unit.canonical) == ("VRS", "Loaded", "Drive Stage", "V")
    assert model.sections == ("Drive Stage",)


def test_a_group_title_over_limit_headers_is_one_header() -> None:
    model = build_table([["Parameter", "Values", "", "", "Unit"], ["", "Min.", "Typ.", "Max.", ""],
                         ["Glow period", "12", "", "19", "ms"]])
    assert model.roles.source is RoleSource.GROUP_HEADER
    assert model.roles.roles[1:4] == (Role.MIN, Role.TYP, Role.MAX)
    assert _fields(_row(model, "Glow period")) == (12.0, None, 19.0)


def test_a_later_table_without_header_inherits_the_roles_even_with_a_column_dropped() -> None:
    first = build_table([HEADER, ["Sensing Block", "", "", "", "", "", ""],
                         ["Tilt gain", "GT", "Axis X", "0.8", "1.0", "1.2", "V/g"]])
    # The next section's table has no conditions at all, so the table tool dropped that column.
    second = build_table([["Logic Block", "", "", "", "", ""],
                          ["Latch threshold", "VLT", "1.7", "–", "2.3", "V"],
                          ["Latch hold", "tLH", "–", "9", "14", "us"]], previous=first)
    assert second.roles.source is RoleSource.INHERITED
    assert _fields(_row(second, "Latch threshold")) == (1.7, None, 2.3)
    assert _fields(_row(second, "Latch hold")) == (None, 9.0, 14.0)


def test_the_part_of_a_table_on_the_next_page_is_a_continuation() -> None:
    first = build_table([HEADER, ["Tilt gain", "GT", "Axis X", "0.8", "1.0", "1.2", "V/g"]])
    rest = build_table([["Tilt gain", "GT", "Axis Y", "0.7", "1.0", "1.3", "V/g"]], previous=first, continued=True)
    assert rest.roles.source is RoleSource.CONTINUED
    assert _fields(rest.rows[0]) == (0.7, 1.0, 1.3)


def test_without_any_header_three_value_columns_before_a_unit_are_min_typ_max() -> None:
    model = build_table([["Purge interval", "tPG", "40", "55", "70", "s"],
                         ["Purge flow", "QPG", "0.2", "–", "0.6", "l/min"]])
    assert model.roles.source is RoleSource.LAYOUT
    assert _fields(_row(model, "Purge interval")) == (40.0, 55.0, 70.0)
    assert _fields(_row(model, "Purge flow")) == (0.2, None, 0.6)


def test_two_unlabelled_value_columns_are_ambiguous_and_give_no_fields() -> None:
    model = build_table([["Idle draw", "IID", "1.5", "3.0", "uA"], ["Burst draw", "IBD", "110", "160", "uA"]])
    row = _row(model, "Idle draw")
    assert row.limits is None
    assert "value columns" in row.ambiguity


def test_columns_of_variants_without_a_unit_column_after_them_are_not_limits() -> None:
    model = build_table([["MODEL DATA", "", "6V", "9V"], ["Rated speed", "rpm", "3100", "4200"],
                         ["Rated draw", "mA", "90", "70"]])
    assert not model.characteristic


def test_empty_name_cells_continue_the_parameter_above_as_its_modes() -> None:
    model = build_table([["Parameter", "Mode", "Min", "Typ", "Max", "Unit"],
                         ["Hiss floor", "Thrifty", "", "1.4", "", "PaRMS"],
                         ["", "Even", "", "0.6", "", ""],
                         ["Frame time", "Even", "", "40", "55", "ms"]])
    parent, sub, other = model.rows
    assert sub.is_sub_row and sub.parent_index == parent.index
    assert (sub.name, sub.sub_label, sub.unit.canonical, _fields(sub)) == ("Hiss floor", "Even", "PaRMS",
                                                                            (None, 0.6, None))
    assert not other.is_sub_row


def test_cells_holding_one_line_per_mode_split_into_sub_rows() -> None:
    model = build_table([["Parameter", "Mode", "Min", "Typ", "Max", "Unit"],
                         ["Hiss floor", "Thrifty\nEven\nKeen", "", "1.4\n0.6\n0.3", "", "PaRMS"]])
    assert [(r.conditions, r.limits.typical) for r in model.rows] == [("Thrifty", 1.4), ("Even", 0.6),
                                                                      ("Keen", 0.3)]
    assert all(r.unit.canonical == "PaRMS" for r in model.rows)


def test_footnote_marks_come_off_the_name_and_resolve_to_their_note() -> None:
    assert split_footnote_marks("Hold current (2)") == ("Hold current", ("2",))
    assert split_footnote_marks("Hold current [1][3]") == ("Hold current", ("1", "3"))
    assert split_footnote_marks("Hold current²") == ("Hold current", ("2",))
    model = build_table([["Parameter", "Rating", "Unit"], ["Hold current (2)", "45", "mA"]],
                        footnotes={"2": "Pulse of 1 ms"})
    assert (model.rows[0].name, model.rows[0].notes) == ("Hold current", ("Pulse of 1 ms",))


@pytest.mark.parametrize("text", ["", "–", "—", "-", "n/a", "N/A", " - "])
def test_dash_and_na_cells_are_not_specified(text: str) -> None:
    assert not_specified(text) and read_cell(text) is None


def test_plus_minus_is_a_pair_of_limits_for_a_limit_quantity_only() -> None:
    model = build_table([["Parameter", "Min", "Typ", "Max", "Unit"],
                         ["Span error", "", "", "+ / - 0.4", "%"],
                         ["Null offset", "", "+/-3", "", "mV"],
                         ["Pivot torque", "", "±5", "", "mNm"],
                         ["Pitch frequency", "", "40 ± 2", "", "kHz"]])
    assert _fields(_row(model, "Span error")) == (-0.4, None, 0.4)
    assert _fields(_row(model, "Null offset")) == (-3.0, None, 3.0)
    assert _fields(_row(model, "Pivot torque")) == (None, 5.0, None)
    pitch = _row(model, "Pitch frequency").limits
    assert (pitch.min, pitch.typical, pitch.max, pitch.tolerance) == (38.0, 40.0, 42.0, 2.0)


def test_the_unit_column_keeps_compound_units_and_a_header_may_print_the_unit() -> None:
    model = build_table([["Parameter", "Min", "Typ", "Max", "Unit"],
                         ["Flux response", "180", "210", "240", "ADC counts/(W/m2)"],
                         ["Hum residue", "", "", "35", "mVpp"]])
    assert _row(model, "Flux response").unit.canonical == "ADC counts/(W/m2)"
    hum = _row(model, "Hum residue").unit
    assert (hum.canonical, hum.measured_as, hum.factor) == ("mVpp", "pp", pytest.approx(1e-3))
    headed = build_table([["Parameter", "Min (V)", "Max (V)"], ["Clamp level", "0.4", "0.9"]])
    assert headed.rows[0].unit.canonical == "V"


def test_a_merged_max_unit_header_gives_the_unit_of_a_row_without_a_maximum() -> None:
    model = build_table([["Parameter", "Min.", "Typ.", "Max. Unit"], ["Sink drive", "8", "16", "mA"]])
    assert (_fields(model.rows[0]), model.rows[0].unit.canonical) == ((8.0, 16.0, None), "mA")


@pytest.mark.parametrize(("text", "canonical", "modelled"), [
    ("µA", "uA", True), ("kΩ", "kohm", True), ("ppm/°C", "ppm/degC", True), ("PaRMS", "PaRMS", True),
    ("ADC counts/(W/m2)", "ADC counts/(W/m2)", False), ("hPa", "hPa", True),
])
def test_unit_cells_are_spelled_in_ascii_and_normalised_with_pint(text: str, canonical: str, modelled: bool) -> None:
    unit = parse_unit_cell(text)
    assert unit is not None and unit.canonical == canonical and unit.modelled is modelled


def test_a_sentence_is_not_a_unit() -> None:
    assert parse_unit_cell("see the timing diagram below for details") is None
    assert parse_unit_cell("12.5") is None


def _variants(row):  # noqa: ANN001, ANN202
    return [(name, (lim.min, lim.typical, lim.max)) for name, lim in row.variants]


def test_part_numbers_over_value_columns_are_variants_not_limits() -> None:
    model = build_table([["Symbol", "Parameter", "QX410 QX411", "Value QX420", "QX430", "Unit"],
                         ["VRM", "Reverse standoff voltage", "40", "60", "80", "V"],
                         ["IFM", "Forward surge current", "", "12", "", "A"]])
    assert model.roles.variant_kind == "part"
    assert model.roles.variant_columns == [2, 3, 4]
    standoff = _row(model, "Reverse standoff voltage")
    assert standoff.limits is None
    assert _variants(standoff) == [("QX410 QX411", (None, 40, None)), ("QX420", (None, 60, None)),
                                   ("QX430", (None, 80, None))]
    assert _row(model, "Forward surge current").variants == ()  # one cell merged over every part's column


def test_min_typ_max_printed_once_per_part_are_that_parts_limits() -> None:
    # The part's name sits in the middle header cell of its group, merged there by the text layer.
    model = build_table([["Characteristic", "Symbol", "Min", "QZ77A Typ", "Max", "Min", "QZ77B Typ", "Max", "Unit"],
                         ["Trim drift over range", "ΔVtr", "–", "4.5", "21", "–", "2.5", "13", "mV"]])
    assert model.roles.variant_kind == "part"
    drift = _row(model, "Trim drift over range")
    assert _variants(drift) == [("QZ77A", (None, 4.5, 21)), ("QZ77B", (None, 2.5, 13))]


def test_the_same_limits_printed_for_every_part_are_the_rows_one_reading() -> None:
    model = build_table([["Characteristic", "Symbol", "Min", "QZ77A Typ", "Max", "Min", "QZ77B Typ", "Max", "Unit"],
                         ["Hold current", "IH", "–", "0.4", "1.2", "–", "0.4", "1.2", "mA"]])
    hold = _row(model, "Hold current")
    assert hold.variants == ()
    assert _fields(hold) == (None, 0.4, 1.2)


def test_repeated_limit_columns_without_a_part_per_group_are_no_variants() -> None:
    model = build_table([["Characteristic", "Min", "Typ", "Max", "Min", "Typ", "Max", "Unit"],
                         ["Trim drift", "–", "4.5", "21", "–", "2.5", "13", "mV"]])
    assert model.roles.variant_kind == ""
    assert _row(model, "Trim drift").variants == ()


def test_guaranteed_limits_per_temperature_are_variants_with_their_bound() -> None:
    # The text layer merged the two header rows: the 25 °C title over Typ and its limit, the group title and the
    # other temperatures each over a column they do not head.
    model = build_table([
        ["Symbol", "Parameter", "Conditions", "VCC", "TA = 25°C Typ", "", "Guaranteed Limits",
         "TA = -40 to 85°C TA = -55 to 125°C", "Units"],
        ["IQS", "Maximum Standby Current", "VIN = VCC", "6.0V", "", "4.0", "40", "80", "uA"],
        ["VRL", "Minimum Release Level", "", "2.0V", "", "1.5", "1.5", "1.5", "V"],
        ["VRL", "Voltage", "", "4.5V", "", "3.15", "3.15", "3.15", "V"],
        ["ISC", "Short Circuit Current", "VO = 0 V", "5.0V", "12", "±20", "±25", "±30", "mA"],
    ])
    roles = model.roles
    assert roles.variant_kind == "temperature" and roles.variant_field is Role.MAX
    assert [roles.variants[i] for i in roles.variant_columns] == ["TA = 25°C", "TA = -40 to 85°C", "TA = -55 to 125°C"]
    standby = _row(model, "Maximum Standby Current")
    assert standby.conditions == "VIN = VCC VCC = 6.0V"
    assert _variants(standby) == [("TA = 25°C", (None, None, 4.0)), ("TA = -40 to 85°C", (None, None, 40)),
                                  ("TA = -55 to 125°C", (None, None, 80))]
    # A name wrapped over the rows of one symbol keeps the bound its first row states.
    assert _variants(_row(model, "Voltage"))[0] == ("TA = 25°C", (3.15, None, None))
    # The typical value printed for 25 °C joins that column's reading; "±25" as a limit bounds the magnitude.
    assert _variants(_row(model, "Short Circuit Current"))[:2] == [("TA = 25°C", (-20, 12, 20)),
                                                                   ("TA = -40 to 85°C", (-25, None, 25))]


def test_temperature_columns_without_a_field_leave_rows_undecided() -> None:
    model = build_table([["Symbol", "Parameter", "25°C", "85°C", "Units"],
                         ["RDS", "Switch resistance", "1.1", "1.6", "Ω"]])
    row = _row(model, "Switch resistance")
    assert row.variants == () and row.limits is None
    assert "variants" in row.ambiguity


def test_a_limit_printed_relative_to_another_pin_leaves_the_row_undecided() -> None:
    model = build_table([["Symbol", "Definition", "Min.", "Max.", "Units"],
                         ["VQ", "Bias rail voltage", "-0.5", "VREF + 18", "V"],
                         ["VR", "Reference rail voltage", "-0.5", "22", "V"]])
    bias = _row(model, "Bias rail voltage")
    assert bias.limits is None
    assert "VREF + 18" in (bias.ambiguity or "")
    assert _fields(_row(model, "Reference rail voltage")) == (-0.5, None, 22)
