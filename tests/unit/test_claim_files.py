"""The repository's claim files stay true to the datasheets' text layer, and the checker catches a wrong claim."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from evaluation.claims import Claim
from tests.support.claim_checker import checker
from tests.support.paths import REPO_ROOT

CLAIM_FILES = sorted((REPO_ROOT / "bench" / "claims").glob("*_claims.yaml"))


def test_the_claim_sets_are_there() -> None:
    assert {p.name for p in CLAIM_FILES} >= {"heldout_claims.yaml", "unseen_claims.yaml", "final_claims.yaml",
                                             "corpus_claims.yaml"}


@pytest.mark.parametrize("path", CLAIM_FILES, ids=lambda p: p.stem)
def test_every_claim_is_printed_on_its_page(path: Path, datasheets_dir: Path) -> None:
    assert checker().check_file(path, datasheets_dir) == []


def _edited(tmp_path: Path, edit: Callable[[dict], None]) -> Path:
    data = yaml.safe_load(CLAIM_FILES[0].read_text())
    edit(data["claims"][0])
    path = tmp_path / "edited.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True))
    return path


def _first_field(claim: dict) -> str:
    return next(k for k in ("max", "typical", "min") if claim.get(k) is not None)


def test_a_quote_the_page_does_not_print_is_reported(datasheets_dir: Path, tmp_path: Path) -> None:
    def edit(claim: dict) -> None:
        claim["source_text"] += " no such words"

    problems = checker().check_file(_edited(tmp_path, edit), datasheets_dir)
    assert len(problems) == 1 and "not on page" in problems[0]


def test_a_value_printed_on_the_page_but_not_in_the_quote_is_reported(datasheets_dir: Path, tmp_path: Path) -> None:
    def edit(claim: dict) -> None:
        claim[_first_field(claim)] = 987654.321

    problems = checker().check_file(_edited(tmp_path, edit), datasheets_dir)
    assert len(problems) == 1 and "987654.321 not printed in source_text" in problems[0]


def test_a_conversion_note_allows_another_prefix_and_nothing_else(datasheets_dir: Path, tmp_path: Path) -> None:
    """1000x the printed value in the claim's unit is wrong, unless the notes say the unit was converted."""
    def scaled(claim: dict) -> None:
        claim[_first_field(claim)] *= 1000

    def scaled_and_noted(claim: dict) -> None:
        scaled(claim)
        claim["notes"] = "printed in another prefix (unit conversion)"

    assert checker().check_file(_edited(tmp_path, scaled), datasheets_dir)
    noted = checker().check_file(_edited(tmp_path, scaled_and_noted), datasheets_dir)
    assert not any("not printed in source_text" in p for p in noted)


def _page_problems(tmp_path: Path, lines: list[tuple[float, float, str]], source: str, unit: str,
                   **fields: float) -> list[str]:
    """The checker's problems for an invented claim on a one-page PDF printing ``lines`` (x, y, text)."""
    import pymupdf

    pdf_path = tmp_path / "invented.pdf"
    with pymupdf.open() as pdf:
        page = pdf.new_page()
        page.insert_font(fontname="uni", fontbuffer=pymupdf.Font("cjk").buffer)  # has Cyrillic and ±
        for x, y, text in lines:
            page.insert_text((x, y), text, fontsize=9, fontname="uni")
        pdf.save(pdf_path)
    claim = Claim(id="part-x", document="part", parameter="Invented", unit=unit, page=1, source_text=source,
                  kind="range" if "min" in fields and "max" in fields else "typical", **fields)
    return checker().claim_problems(claim, checker().read_page(pdf_path, 1))


def test_a_sign_printed_apart_from_its_number_is_read(tmp_path: Path) -> None:
    lines = [(40, 100, "Offset drift - 4.7 uV/K"), (40, 120, "Gate bias ± 15 V")]
    assert _page_problems(tmp_path, lines, "Offset drift - 4.7 uV/K", "uV/K", typical=-4.7) == []
    assert _page_problems(tmp_path, lines, "Gate bias ± 15 V", "V", min=-15, max=15) == []
    flipped = _page_problems(tmp_path, lines, "Gate bias ± 15 V", "V", min=15, max=15)
    assert any("min 15.0 not printed" in p for p in flipped)


def test_a_list_bullet_after_a_colon_is_no_sign(tmp_path: Path) -> None:
    lines = [(40, 100, "Fast settling: - 7 us to 0.1 %")]
    assert _page_problems(tmp_path, lines, "Fast settling: - 7 us to 0.1 %", "us", typical=7) == []
    negative = _page_problems(tmp_path, lines, "Fast settling: - 7 us to 0.1 %", "us", typical=-7)
    assert any("typical -7.0 not printed" in p for p in negative)


def test_a_dash_between_two_numbers_stays_a_range_dash(tmp_path: Path) -> None:
    lines = [(40, 100, "Input range 2.2 - 6.3 V")]
    assert _page_problems(tmp_path, lines, "Input range 2.2 - 6.3 V", "V", min=2.2, max=6.3) == []
    negative = _page_problems(tmp_path, lines, "Input range 2.2 - 6.3 V", "V", min=-6.3, max=2.2)
    assert any("min -6.3 not printed" in p for p in negative)


def test_a_unit_printed_with_latin_lookalike_letters_is_read(tmp_path: Path) -> None:
    # the degree unit as some text layers print it: a Cyrillic capital Es after the degree sign
    problems = _page_problems(tmp_path, [(40, 100, "Ambient TA -25 ~ +85 °\u0421")], "Ambient TA -25 ~ +85 °\u0421",
                              "degC", min=-25, max=85)
    assert problems == []


_UNIT_COLUMN_TABLE = [
    (40, 100, "Parameter"), (200, 100, "Min"), (250, 100, "Typ"), (300, 100, "Max"), (350, 100, "Unit"),
    (40, 120, "Leak current Vx = 3 V"), (250, 120, "0.4"), (300, 120, "1.1"), (350, 120, "nA"),
    (40, 135, "Vx = 9 V"), (250, 135, "0.8"), (300, 135, "2.6"),
    (40, 160, "Hold time"), (200, 160, "17"), (250, 160, "23"),
    (40, 175, "Setup time"), (200, 175, "12"), (250, 175, "19"), (350, 168, "ps"),
]


def test_a_unit_printed_once_for_a_block_of_rows_in_the_unit_column_is_read(tmp_path: Path) -> None:
    assert _page_problems(tmp_path, _UNIT_COLUMN_TABLE, "Vx = 9 V 0.8 2.6", "nA", typical=0.8, max=2.6) == []
    # a unit cell centred on its block sits below the block's first row
    assert _page_problems(tmp_path, _UNIT_COLUMN_TABLE, "Hold time 17 23", "ps", min=17, typical=23) == []
    wrong = _page_problems(tmp_path, _UNIT_COLUMN_TABLE, "Vx = 9 V 0.8 2.6", "uA", typical=0.8, max=2.6)
    assert any("unit 'uA' printed neither" in p for p in wrong)


def test_a_ring_above_printed_for_the_degree_sign_is_read(tmp_path: Path) -> None:
    lines = [(40, 100, "Theta JA 88 \u02daC/W")]
    assert _page_problems(tmp_path, lines, "Theta JA 88 \u02daC/W", "degC/W", typical=88) == []


def _table(rows: list[tuple[float, list[tuple[float, str]]]]) -> list[tuple[float, float, str]]:
    return [(x, y, text) for y, cells in rows for x, text in cells]


_GRADES_HEADER = (100, [(40, "Parameter"), (200, "Min"), (240, "Typ"), (280, "Max"), (330, "Min"), (370, "Typ"),
                        (410, "Max"), (460, "Unit")])


def test_negative_limits_ordered_by_magnitude_in_their_columns_pass(tmp_path: Path) -> None:
    lines = _table([_GRADES_HEADER, (120, [(40, "Line ratio"), (240, "-0.8"), (280, "-3.1"), (370, "-0.9"),
                                           (410, "-3.3"), (460, "mV/V")])])
    source = "Line ratio -0.8 -3.1 -0.9 -3.3 mV/V"
    assert _page_problems(tmp_path, lines, source, "mV/V", typical=-0.8, max=-3.1) == []
    # the second grade's columns: the repeated Min/Typ/Max group is read as well
    assert _page_problems(tmp_path, lines, source, "mV/V", typical=-0.9, max=-3.3) == []
    # in signed order, but the columns say otherwise
    crossed = _page_problems(tmp_path, lines, source, "mV/V", typical=-3.1, max=-0.8)
    assert any("typical -3.1 is printed in the max column" in p for p in crossed)


def test_magnitude_order_needs_the_columns_to_confirm_it(tmp_path: Path) -> None:
    lines = [(40, 100, "Drift -0.8 to -3.1 mV/K")]
    problems = _page_problems(tmp_path, lines, "Drift -0.8 to -3.1 mV/K", "mV/K", min=-0.8, max=-3.1)
    assert any("out of order" in p for p in problems)


def test_a_symmetric_limit_in_the_max_column_states_the_min_too(tmp_path: Path) -> None:
    lines = _table([(100, [(40, "Parameter"), (200, "Min"), (250, "Typ"), (300, "Max"), (350, "Unit")]),
                    (120, [(40, "Gain error"), (250, "±0.2"), (300, "±1.5"), (350, "%")])])
    assert _page_problems(tmp_path, lines, "Gain error ±0.2 ±1.5 %", "%", min=-1.5, max=1.5) == []
    as_typical = _page_problems(tmp_path, lines, "Gain error ±0.2 ±1.5 %", "%", min=-1.5, typical=1.5)
    assert any("typical 1.5 is printed in the max column" in p for p in as_typical)


def test_a_long_table_keeps_its_header_and_a_later_unit_header_starts_another(tmp_path: Path) -> None:
    rows: list[tuple[float, list[tuple[float, str]]]] = [
        (60, [(40, "Parameter"), (200, "Min"), (250, "Typ"), (300, "Max"), (350, "Unit")])]
    rows += [(80 + 15 * i, [(40, f"Row {i}"), (250, f"{i + 1}.5"), (350, "V")]) for i in range(18)]
    rows += [(380, [(40, "Sink current"), (200, "31"), (250, "44"), (300, "58"), (350, "mA")]),
             (420, [(40, "Package"), (220, "QFN"), (290, "SOIC"), (350, "Unit")]),
             (440, [(40, "Theta JA"), (220, "48"), (290, "97"), (350, "K/W")])]
    lines = _table(rows)
    far = _page_problems(tmp_path, lines, "Sink current 31 44 58 mA", "mA", typical=58)
    assert any("typical 58.0 is printed in the max column" in p for p in far)
    # the package table has no Min/Typ/Max header of its own: the one above heads another table
    assert _page_problems(tmp_path, lines, "Theta JA 48 97 K/W", "K/W", typical=97) == []
