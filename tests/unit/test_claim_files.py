"""The repository's claim files stay true to the datasheets' text layer, and the checker catches a wrong claim."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

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
