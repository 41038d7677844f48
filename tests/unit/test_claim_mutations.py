"""The claim checker fails wrong claims: every mutant planted next to a passing claim is reported.

``.venv/bin/python bench/claims/check_claims.py --mutate FILE...`` prints the same score per file and kind.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.claim_checker import CLAIMS_DIR, checker
from tests.support.paths import CLAIMS_FILE

CLAIM_FILES = [*sorted(CLAIMS_DIR.glob("*_claims.yaml")), CLAIMS_FILE]
KINDS = {"neighbour", "sign", "swap", "column", "unit", "page"}


@pytest.mark.parametrize("path", CLAIM_FILES, ids=lambda p: p.stem)
def test_every_planted_mutant_is_caught(path: Path, datasheets_dir: Path) -> None:
    results = checker().planted_mutants(path, datasheets_dir)
    escaped = [f"{mutant.claim_id} {mutant.kind}" for mutant, problems in results if not problems]
    assert results and not escaped, escaped


def test_every_kind_of_mutant_is_planted(datasheets_dir: Path) -> None:
    kinds = {mutant.kind for path in CLAIM_FILES for mutant, _ in checker().planted_mutants(path, datasheets_dir)}
    assert kinds == KINDS


def test_each_kind_is_caught_for_its_own_reason(datasheets_dir: Path) -> None:
    """A mutant caught only by accident (another check tripping) would not show the check works."""
    expected = {"neighbour": ("not printed in source_text",), "sign": ("not printed in source_text",),
                # swapped limits of a negative quantity whose columns order it by magnitude (Min -5, Max -30)
                # are in signed order: only their columns show the swap
                "swap": ("out of order", "column"), "column": ("column",), "unit": ("unit 'kg'",),
                "page": ("not on page",)}
    for mutant, problems in checker().planted_mutants(CLAIM_FILES[0], datasheets_dir):
        if mutant.kind == "unit" and mutant.claim.unit != "kg":
            continue
        reasons = expected[mutant.kind]
        if mutant.kind == "swap" and max(mutant.claim.stated_fields.values()) > 0:
            reasons = ("out of order",)
        assert any(r in p for r in reasons for p in problems), (mutant.claim_id, mutant.kind, problems)
