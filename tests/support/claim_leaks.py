"""Finding a sealed claim set's contents in code that could be tuned against it.

A claim set measures generalisation only while nobody has tuned on it. Its header says which it is:

    sealed: true            # never opened: use only to measure
    sealed: false           # opened; `opened_because` says how, and its figures are development figures
    opened_because: "..."

A sealed set leaks when a test file or a reader source contains, for any of its claims,

* the parameter name, when it is distinctive: qualified (a digit or one of ``( ) , @ /``) or five words or more.
  "Operating temperature range" is vocabulary a reader must know; "Hold time (2 kHz, mode B)" is the claim;
* the quote: any 24-character slice of ``source_text`` that holds both a letter and a digit (ties words to a value);
* a distinctive value string: a needle of 6+ non-space characters with a digit and a letter ("3 furlongs", not
  "5 mV"), or a stated number with 4+ significant digits.

Text is compared casefolded with whitespace collapsed, so reflowing a copied line does not hide it. A fingerprint
that an opened claim set also prints (a common parameter name, a standard temperature range) was public before the
sealed set existed: code that holds it learned it elsewhere, so it is not counted.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import yaml

QUOTE_SLICE = 24
MIN_NAME_WORDS = 5
NAME_QUALIFIER = re.compile(r"[\d(),@/]")
MIN_NEEDLE_CHARS = 6
MIN_SIGNIFICANT_DIGITS = 4
SCANNED_SUFFIXES = {".py", ".yaml", ".yml", ".json", ".txt", ".md"}


@dataclass(frozen=True)
class Leak:
    path: Path
    claim_id: str
    kind: str  # "parameter", "quote" or "value"
    text: str

    def __str__(self) -> str:
        return f"{self.path}: {self.kind} of claim {self.claim_id}: {self.text!r}"


def normalise(text: str) -> str:
    return " ".join(text.split()).casefold()


def header(path: Path) -> dict:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    return data if isinstance(data, dict) else {}


def is_sealed(path: Path) -> bool:
    return header(path).get("sealed") is True


def _significant_digits(number: str) -> int:
    return len(number.replace("-", "").replace(".", "").strip("0"))


def _number_strings(value: float) -> set[str]:
    text = f"{value:g}" if abs(value) < 1e6 else f"{value:.0f}"
    return {text} if _significant_digits(text) >= MIN_SIGNIFICANT_DIGITS else set()


def _quote_slices(source: str) -> set[str]:
    slices = set()
    for start in range(0, max(len(source) - QUOTE_SLICE, 0) + 1):
        piece = source[start:start + QUOTE_SLICE]
        if len(piece) == QUOTE_SLICE and re.search(r"[a-z]", piece) and re.search(r"\d", piece):
            slices.add(piece)
    return slices


def fingerprints(claim: dict) -> dict[str, tuple[str, str]]:
    """Normalised needle → (kind, original text) for one claim."""
    found: dict[str, tuple[str, str]] = {}
    name = claim.get("parameter") or ""
    if len(name.split()) >= MIN_NAME_WORDS or NAME_QUALIFIER.search(name):
        found[normalise(name)] = ("parameter", name)
    source = normalise(claim.get("source_text") or "")
    for piece in _quote_slices(source):
        found[piece] = ("quote", piece)
    for needle in claim.get("needles") or []:
        needle = str(needle)
        spelled = re.sub(r"\s", "", needle)
        if len(spelled) >= MIN_NEEDLE_CHARS and re.search(r"\d", spelled) and re.search(r"[^\W\d_]", spelled):
            found[normalise(needle)] = ("value", needle)
    for field in ("min", "typical", "max"):
        value = claim.get(field)
        if isinstance(value, int | float):
            for number in _number_strings(float(value)):
                found[number] = ("value", number)
    return found


def scanned_files(roots: Iterable[Path]) -> list[Path]:
    files: list[Path] = []
    for root in roots:
        candidates = [root] if root.is_file() else sorted(root.rglob("*"))
        files += [p for p in candidates
                  if p.is_file() and p.suffix in SCANNED_SUFFIXES and "__pycache__" not in p.parts]
    return files


def _contains_number(text: str, number: str) -> bool:
    # A number leaks only as a whole number: "1500" is not in "15000".
    return re.search(rf"(?<![\d.]){re.escape(number)}(?![\d])", text) is not None


def public_text(opened_sets: Iterable[Path]) -> str:
    """The opened sets' text, normalised: what a sealed set shares with it is vocabulary, not the sealed claim."""
    return "\n".join(normalise(path.read_text(encoding="utf-8")) for path in opened_sets)


def find_leaks(claim_file: Path, roots: Iterable[Path], public: str = "") -> list[Leak]:
    claims = (yaml.safe_load(claim_file.read_text(encoding="utf-8")) or {}).get("claims") or []
    by_needle: dict[str, tuple[str, str, str]] = {}
    for claim in claims:
        for needle, (kind, original) in fingerprints(claim).items():
            if needle not in public:
                by_needle.setdefault(needle, (claim.get("id", "?"), kind, original))
    slices = {n: v for n, v in by_needle.items() if v[1] == "quote"}
    others = {n: v for n, v in by_needle.items() if v[1] != "quote"}
    leaks: list[Leak] = []
    for path in scanned_files(roots):
        text = normalise(path.read_text(encoding="utf-8", errors="replace"))
        hit: set[str] = set()
        for start in range(0, max(len(text) - QUOTE_SLICE, -1) + 1):
            piece = text[start:start + QUOTE_SLICE]
            if piece in slices and slices[piece][0] not in hit:
                claim_id, kind, original = slices[piece]
                hit.add(claim_id)
                leaks.append(Leak(path, claim_id, kind, original))
        for needle, (claim_id, kind, original) in others.items():
            is_number = re.fullmatch(r"-?[\d.]+", needle) is not None
            if (_contains_number(text, needle) if is_number else needle in text):
                leaks.append(Leak(path, claim_id, kind, original))
    return leaks
