"""Grading one extraction against one claim: lenient needles, strict numbers, conditions, page.

Two verdicts on purpose. ``fidelity`` is the study's lenient needle check: every needle token must be a
case-insensitive substring of the extraction's structured values and unit. It is kept because archived runs
were judged that way, and it is known to be lenient ("1" is found in "1.7", "Pa" in "PaRMS"). ``exact`` is the
primary verdict: every number the claim states (min, typical, max) must equal the same field of one extracted
value once both are in the claim's unit. The permutation control (each claim graded against other claims'
extractions) measures how often each check passes by chance.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any

from evaluation.claims import Claim
from evaluation.units import ascii_unit, canonical_number, convert, number_tokens, same_number

FIELDS = ("min", "typical", "max")
# Words that join numbers in a printed needle ("3 to 30", "21kHz to 28kHz") but are never in structured values.
_CONNECTIVES = {"to", "and", "or", "from", "~", "-", "–", "—", "/", "...", "…"}
_EDGE_PUNCTUATION = "()[]{}<>≤≥=,;:'\"~"
_PLUS_MINUS = re.compile(r"(?:±|\+/-|\+/−)\s*(\d+(?:[.,]\d+)?|[.,]\d+)")


@dataclass
class Grade:
    """The verdicts of one (claim, extraction) pair. ``None`` means "not applicable", never "failed"."""

    found: bool
    fidelity: bool
    exact: bool
    needles: dict[str, bool] = field(default_factory=dict)
    matched_value: int | None = None
    fields: dict[str, str] = field(default_factory=dict)  # see _compare_fields
    conditions: float | None = None
    page_match: bool | None = None
    below_confidence_floor: bool = False

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def value_text(values: list[dict[str, Any]]) -> str:
    """The structured values as one case-folded string: canonical numbers and the ASCII unit of each value."""
    parts = []
    for value in values:
        numbers = [canonical_number(value[f]) for f in FIELDS if value.get(f) is not None]
        parts.append(" ".join([*numbers, ascii_unit(value.get("unit")).casefold()]))
    return " | ".join(parts)


def needle_tokens(needle: str) -> list[str]:
    """A printed needle as the tokens structured values can contain: canonical numbers (``+125``→``125``,
    ``.020``→``0.02``, ``5,25``→``5.25``, ``±50``→``50``) and unit words in ASCII, case-folded."""
    tokens: list[str] = []
    cursor = 0
    for start, end, number in number_tokens(needle):
        tokens.extend(_text_tokens(needle[cursor:start]))
        tokens.append(number)
        cursor = end
    tokens.extend(_text_tokens(needle[cursor:]))
    return tokens


def _text_tokens(text: str) -> list[str]:
    tokens = []
    for piece in text.split():
        piece = piece.strip(_EDGE_PUNCTUATION)
        if piece and piece.casefold() not in _CONNECTIVES and piece not in "+-±":
            tokens.append(ascii_unit(piece).casefold())
    return tokens


def claim_needles(claim: Claim) -> list[str]:
    """The claim's needles, or (for claims exported without a quote) its stated numbers and unit."""
    if claim.needles:
        return list(claim.needles)
    generated = [canonical_number(v) for v in claim.stated_fields.values()]
    return [*generated, claim.unit] if claim.unit else generated


def check_needles(claim: Claim, values: list[dict[str, Any]]) -> dict[str, bool]:
    haystack = value_text(values)
    return {needle: all(token in haystack for token in needle_tokens(needle)) for needle in claim_needles(claim)}


def plus_minus_magnitude(claim: Claim) -> float | None:
    """X when the claim's limit is printed ``±X`` (then min = -X, max = X and max = X alone are equivalent
    readings of it)."""
    stated = claim.max if claim.max is not None else claim.typical
    if stated is None:
        return None
    for text in [*claim.needles, claim.source_text or ""]:
        for match in _PLUS_MINUS.finditer(text):
            if same_number(float(match.group(1).replace(",", ".")), abs(stated)):
                return abs(stated)
    return None


def _compare_fields(claim: Claim, value: dict[str, Any], expected: dict[str, float]) -> dict[str, str]:
    """Per stated field: match | mismatch | missing | unit_missing | unit_mismatch.

    A value without a unit does not pass a claim that has one: the number alone does not say what was read.
    """
    verdicts: dict[str, str] = {}
    for name, wanted in expected.items():
        got = value.get(name)
        if got is None:
            verdicts[name] = "missing"
            continue
        if claim.unit and not ascii_unit(value.get("unit")):
            verdicts[name] = "unit_missing"
            continue
        converted = convert(float(got), value.get("unit"), claim.unit)
        if converted is None:
            verdicts[name] = "unit_mismatch"
        else:
            verdicts[name] = "match" if same_number(converted, wanted) else "mismatch"
    return verdicts


def check_exact(claim: Claim, values: list[dict[str, Any]]) -> tuple[bool, int | None, dict[str, str]]:
    """(passed, index of the matching value (or the closest one), per-field verdicts of that value)."""
    expected = claim.stated_fields
    alternatives = [expected]
    magnitude = plus_minus_magnitude(claim)
    if magnitude is not None:
        # A limit printed "±X" reads equally as min -X / max X, or as the magnitude limit max X alone.
        alternatives += [{"min": -magnitude, "max": magnitude}, {"max": magnitude}]
    best: tuple[int, int | None, dict[str, str]] = (-1, None, {f: "missing" for f in expected})
    for index, value in enumerate(values):
        for wanted in alternatives:
            verdicts = _compare_fields(claim, value, wanted)
            matches = sum(v == "match" for v in verdicts.values())
            if matches == len(wanted):
                return True, index, verdicts
            if matches > best[0]:
                best = (matches, index, verdicts)
    return False, best[1], best[2]


def _normal_condition(text: str) -> str:
    text = ascii_unit(text).casefold()
    for a, b in (("≤", "<="), ("≥", ">="), ("–", "-"), ("—", "-"), ("−", "-"), ("£", "<=")):
        text = text.replace(a, b)
    return re.sub(r"\s+", "", text)


def check_conditions(claim: Claim, values: list[dict[str, Any]], matched: int | None) -> float | None:
    """Share of the claim's conditions whose text appears (case/space-insensitively) in the extraction's."""
    if not claim.conditions:
        return None
    pool = values if matched is None else [values[matched]]
    extracted = "|".join(_normal_condition(c) for v in pool for c in v.get("conditions") or [])
    hits = sum(_normal_condition(c) in extracted for c in claim.conditions)
    return hits / len(claim.conditions)


def grade(claim: Claim, extraction: dict[str, Any] | None, confidence_floor: float | None = None) -> Grade:
    """Grade an extraction (the ``SubmittedExtraction`` dict, or ``None`` after an engine error)."""
    if not extraction or not extraction.get("found"):
        return Grade(found=False, fidelity=False, exact=False)
    confidence = extraction.get("confidence")
    if confidence_floor is not None and (confidence is None or confidence < confidence_floor):
        return Grade(found=True, fidelity=False, exact=False, below_confidence_floor=True)
    values = list(extraction.get("values") or [])
    needles = check_needles(claim, values)
    exact, matched, fields = check_exact(claim, values)
    page = extraction.get("source_page")
    return Grade(
        found=True,
        fidelity=bool(needles) and all(needles.values()),
        exact=exact,
        needles=needles,
        matched_value=matched,
        fields=fields,
        conditions=check_conditions(claim, values, matched if exact else None),
        page_match=None if claim.page is None or page is None else int(page) == claim.page,
    )


@dataclass
class PermutationResult:
    """How often a claim passes against extractions made for *other* claims: the chance pass rate."""

    pairs: int = 0
    fidelity_passes: int = 0
    exact_passes: int = 0
    same_document_pairs: int = 0
    same_document_fidelity_passes: int = 0
    same_document_exact_passes: int = 0

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["fidelity_rate"] = _rate(self.fidelity_passes, self.pairs)
        data["exact_rate"] = _rate(self.exact_passes, self.pairs)
        data["same_document_fidelity_rate"] = _rate(self.same_document_fidelity_passes, self.same_document_pairs)
        data["same_document_exact_rate"] = _rate(self.same_document_exact_passes, self.same_document_pairs)
        return data


def _rate(k: int, n: int) -> float | None:
    return k / n if n else None


def permutation_control(claims: list[Claim], extractions: list[tuple[str, dict[str, Any] | None]]) -> PermutationResult:
    """Grade every claim against every extraction produced for a different claim.

    ``extractions`` are ``(claim_id, extraction)`` pairs, one per cell. A sound grader passes almost none of
    these pairs; the lenient needle check passes noticeably more, which is the measure of its leniency.
    """
    result = PermutationResult()
    by_id = {c.id: c for c in claims}
    for owner_id, extraction in extractions:
        owner = by_id.get(owner_id)
        if owner is None or not extraction or not extraction.get("found"):
            continue
        for claim in claims:
            if claim.id == owner_id:
                continue
            verdict = grade(claim, extraction)
            result.pairs += 1
            result.fidelity_passes += verdict.fidelity
            result.exact_passes += verdict.exact
            if claim.document == owner.document:
                result.same_document_pairs += 1
                result.same_document_fidelity_passes += verdict.fidelity
                result.same_document_exact_passes += verdict.exact
    return result
