"""Sealed claim sets stay sealed: no test and no reader source quotes them."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.support.claim_leaks import find_leaks, header, is_sealed, public_text
from tests.support.paths import CLAIMS_FILE, REPO_ROOT

CLAIM_FILES = sorted((REPO_ROOT / "bench" / "claims").glob("*_claims.yaml"))
SEALED = [p for p in CLAIM_FILES if is_sealed(p)]
OPENED = [CLAIMS_FILE, *(p for p in CLAIM_FILES if not is_sealed(p))]
# Everything that could be tuned against a claim set: the tests and the offline reader.
GUARDED = [REPO_ROOT / "tests", REPO_ROOT / "app" / "agent" / "offline"]


@pytest.mark.parametrize("path", CLAIM_FILES, ids=lambda p: p.stem)
def test_every_claim_set_says_whether_it_has_been_opened(path: Path) -> None:
    fields = header(path)
    assert isinstance(fields.get("sealed"), bool), f"{path.name}: header needs `sealed: true|false`"
    if not fields["sealed"]:
        assert str(fields.get("opened_because") or "").strip(), f"{path.name}: an opened set says why"


def test_the_sets_tuned_on_are_marked_as_development_sets() -> None:
    for name in ("heldout_claims.yaml", "unseen_claims.yaml", "final_claims.yaml"):
        assert not is_sealed(REPO_ROOT / "bench" / "claims" / name)


def test_no_test_or_reader_source_quotes_a_sealed_set() -> None:
    public = public_text(OPENED)
    leaks = [leak for path in SEALED for leak in find_leaks(path, GUARDED, public)]
    assert not leaks, "sealed claims leaked:\n" + "\n".join(map(str, leaks))


@pytest.mark.parametrize("path", CLAIM_FILES, ids=lambda p: p.stem)
def test_no_test_quotes_any_claim_set(path: Path) -> None:
    """Opened sets too: a test built from a claim cements what the claim measures (the reader's own sources
    were tuned on the opened sets before they were marked, which is why those are development sets)."""
    others = public_text(p for p in [CLAIMS_FILE, *CLAIM_FILES] if p != path)
    leaks = find_leaks(path, [REPO_ROOT / "tests"], others)
    assert not leaks, "claims quoted by tests:\n" + "\n".join(map(str, leaks))


SEALED_CLAIMS = {
    "version": 1,
    "sealed": True,
    "documents": {"pump": {"file": "pump.pdf", "pages": 2}},
    "claims": [{
        "id": "pump-hold-time", "document": "pump", "parameter": "Valve hold time (2 kHz, mode B)", "kind": "max",
        "max": 13.75, "unit": "ms", "page": 2, "source_text": "Valve hold time, mode B (2 kHz) ....... 13.75 ms max",
        "needles": ["13.75 ms max"],
    }],
}


@pytest.fixture
def sealed_set(tmp_path: Path) -> Path:
    path = tmp_path / "sealed_claims.yaml"
    path.write_text(yaml.safe_dump(SEALED_CLAIMS, allow_unicode=True))
    return path


def _planted(tmp_path: Path, text: str) -> Path:
    root = tmp_path / "guarded"
    root.mkdir(exist_ok=True)
    (root / "test_planted.py").write_text(text)
    return root


def test_vocabulary_an_opened_set_prints_is_not_a_leak(sealed_set: Path, tmp_path: Path) -> None:
    planted = _planted(tmp_path, 'request = "Valve hold time (2 kHz, mode B)"\n')
    assert find_leaks(sealed_set, [planted])
    assert not find_leaks(sealed_set, [planted], public="valve hold time (2 khz, mode b)")


@pytest.mark.parametrize(("planted", "kind"), [
    ('request = "Valve hold time (2 kHz, mode B)"\n', "parameter"),
    ('lines = ["Valve hold time, mode B (2 kHz) ... 13.75 ms max"]\n', "quote"),
    # Reflowed over two lines and re-cased: still the quote.
    ('LINE = ("VALVE HOLD TIME, MODE B (2 kHz)"\n        " .......")\n', "quote"),
    ("assert reading.max == 13.75\n", "value"),
])
def test_a_planted_leak_is_caught(sealed_set: Path, tmp_path: Path, planted: str, kind: str) -> None:
    leaks = find_leaks(sealed_set, [_planted(tmp_path, planted)])
    assert ("pump-hold-time", kind) in {(leak.claim_id, leak.kind) for leak in leaks}


@pytest.mark.parametrize("clean", [
    'request = "Valve hold time"\n',  # vocabulary, not the claim
    "assert reading.max == 113.75\n",  # another number that contains the digits
    'lines = ["Valve hold time, mode A (4 kHz) ... 8.5 ms max"]\n',
])
def test_invented_text_near_a_sealed_claim_is_not_a_leak(sealed_set: Path, tmp_path: Path, clean: str) -> None:
    assert find_leaks(sealed_set, [_planted(tmp_path, clean)]) == []
