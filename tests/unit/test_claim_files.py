"""The repository's claim files stay true to the datasheets' text layer, and the checker catches a wrong claim."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest
import yaml

from tests.support.paths import REPO_ROOT

CLAIM_FILES = sorted((REPO_ROOT / "bench" / "claims").glob("*_claims.yaml"))


def checker() -> ModuleType:
    spec = importlib.util.spec_from_file_location("check_claims", REPO_ROOT / "bench" / "claims" / "check_claims.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_claim_sets_are_there() -> None:
    assert {p.name for p in CLAIM_FILES} >= {"heldout_claims.yaml", "unseen_claims.yaml", "final_claims.yaml",
                                             "corpus_claims.yaml"}


@pytest.mark.parametrize("path", CLAIM_FILES, ids=lambda p: p.stem)
def test_every_claim_is_printed_on_its_page(path: Path, datasheets_dir: Path) -> None:
    assert checker().check_file(path, datasheets_dir) == []


def test_a_claim_the_page_does_not_print_is_reported(datasheets_dir: Path, tmp_path: Path) -> None:
    data = yaml.safe_load(CLAIM_FILES[0].read_text())
    first = data["claims"][0]
    field = next(k for k in ("max", "typical", "min") if first.get(k) is not None)
    first[field] = 987654.321
    first["source_text"] = first["source_text"] + " no such words"
    edited = tmp_path / "edited.yaml"
    edited.write_text(yaml.safe_dump(data, allow_unicode=True))
    problems = checker().check_file(edited, datasheets_dir)
    assert any("not on page" in p for p in problems) and any("987654.321" in p for p in problems)
