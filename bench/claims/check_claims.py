"""Check a claims file against the PyMuPDF text layer of the datasheets it cites.

Run from the repository root:  .venv/bin/python bench/claims/check_claims.py [CLAIMS.yaml ...]
(default: the shared dev claims and bench/claims/heldout_claims.yaml).

For every claim, with whitespace collapsed to single spaces as the claims README prescribes:

* ``source_text`` occurs on the stated page and is at most 200 characters;
* every needle occurs in ``source_text``;
* every stated number (min / typical / max) is printed in ``source_text`` or, failing that, elsewhere on the
  page. Numbers are compared by magnitude (a sign is often printed apart from its number: ``± 0,5``,
  ``–40``), reading ``5,25`` and ``1,000`` both ways, and allowing a factor of 1000^k so a claim stated in
  another SI prefix than the page (1250 mW as 1.25 W) still checks.

Exits 1 when any claim fails, printing one line per problem.
"""

from __future__ import annotations

import math
import os
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from evaluation.claims import Claim, ClaimSet, load_claims, resolve_document  # noqa: E402

SHARED = Path(os.environ.get("DSX_SHARED_DIR", REPO.parent / "shared"))
DEFAULT_FILES = (SHARED / "eval" / "dev_claims.yaml", REPO / "bench" / "claims" / "heldout_claims.yaml")
MAX_SOURCE_CHARS = 200
_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?|\.\d+")


def collapse(text: str) -> str:
    return " ".join(text.split())


def printed_magnitudes(text: str) -> set[float]:
    """Every number printed in ``text`` as a magnitude; ``a,b`` yields both the decimal-comma and the
    thousands-separator reading."""
    found: set[float] = set()
    for token in _NUMBER.findall(text):
        token = token.rstrip(",")
        readings = {token.replace(",", "")}
        if token.count(",") == 1 and "." not in token:
            readings.add(token.replace(",", "."))
        for reading in readings:
            try:
                found.add(float(reading))
            except ValueError:
                continue
    return found


def is_printed(value: float, magnitudes: set[float]) -> bool:
    wanted = abs(value)
    for printed in magnitudes:
        for power in range(-3, 4):
            if math.isclose(printed * 1000.0**power, wanted, rel_tol=1e-9, abs_tol=1e-12):
                return True
    return False


def claim_problems(claim: Claim, page_text: str) -> list[str]:
    problems: list[str] = []
    source = collapse(claim.source_text or "")
    if not source:
        return ["no source_text"]
    if len(source) > MAX_SOURCE_CHARS:
        problems.append(f"source_text is {len(source)} chars (> {MAX_SOURCE_CHARS})")
    if source not in page_text:
        problems.append(f"source_text not on page {claim.page}: {source!r}")
    problems += [f"needle {needle!r} not in source_text" for needle in claim.needles if needle not in source]
    in_source, on_page = printed_magnitudes(source), printed_magnitudes(page_text)
    for name, value in claim.stated_fields.items():
        if not is_printed(value, in_source) and not is_printed(value, on_page):
            problems.append(f"{name} {value} printed neither in source_text nor on page {claim.page}")
    return problems


def check_file(path: Path, datasheets: Path) -> list[str]:
    import pymupdf

    claims: ClaimSet = load_claims(path)
    problems: list[str] = []
    pages: dict[tuple[str, int], str] = {}
    seen: set[str] = set()
    for claim in claims.claims:
        if claim.id in seen:
            problems.append(f"{claim.id}: duplicate id")
        seen.add(claim.id)
        if claim.page is None:
            problems.append(f"{claim.id}: no page")
            continue
        key = (claim.document, claim.page)
        if key not in pages:
            with pymupdf.open(resolve_document(claims.documents[claim.document], datasheets)) as pdf:
                pages[key] = collapse(pdf[claim.page - 1].get_text())
        problems += [f"{claim.id}: {problem}" for problem in claim_problems(claim, pages[key])]
    return problems


def main(argv: list[str]) -> int:
    files = [Path(a) for a in argv] or list(DEFAULT_FILES)
    failed = False
    for path in files:
        problems = check_file(path, SHARED / "datasheets")
        count = len(load_claims(path).claims)
        print(f"{path}: {count} claims, {len(problems)} problems")
        for problem in problems:
            print(f"  {problem}")
        failed = failed or bool(problems)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
