"""Figures of one quantity listed side by side, each with the word naming its limit.

Feature lines and value cells print a quantity's limits together, each labelled: ``15 µA typ, 25 µA max``,
``typ 0.4 mV / max 1.5 mV``, ``35 µA typ (50 µA max)``. Read one figure at a time, such a list answers with its
first limit only; read together, it is one reading of min / typical / max.
"""

from __future__ import annotations

import re
from dataclasses import replace

from app.agent.offline.candidates import Candidate
from app.agent.offline.values import Reading

_FIELD_OF_WORD = {"typ": "typical", "nom": "typical", "max": "max", "min": "min"}
_WORD_AFTER = re.compile(r"^\s*\(?\s*(typ|nom|max|min)[a-z]*\.?\s*\)?", re.IGNORECASE)
_WORD_BEFORE = re.compile(r"\b(typ|nom|max|min)[a-z]*\.?\s*:?\s*$", re.IGNORECASE)
_LIST_SEPARATOR = re.compile(r"^\s*(?:[,;/(]|and)?\s*$", re.IGNORECASE)


def labelled_limits(line: str, readings: list[Reading], cands: list[Candidate]) -> list[Candidate]:
    """'Quiescent current: 15 µA typ, 25 µA max', 'typ 0.5 mV / max 2 mV': figures of one quantity listed side by
    side, each with the word naming its limit, are one reading of min / typical / max."""
    if len(readings) < 2 or len(readings) != len(cands):
        return []
    words: list[tuple[str | None, int, int]] = []  # (field, start, end) of each figure with its word
    for reading in readings:
        after = _WORD_AFTER.match(line[reading.end:reading.end + 14])
        before = _WORD_BEFORE.search(line[max(0, reading.start - 10):reading.start])
        word = after or before
        field = _FIELD_OF_WORD[word.group(1).lower()[:3]] if word and reading.kind == "single" else None
        start = reading.start - (len(before.group(0)) if before and not after else 0)
        words.append((field, start, reading.end + (after.end() if after else 0)))
    found: list[Candidate] = []
    k = 0
    while k < len(readings):
        j = k + 1
        while (j < len(readings) and words[j][0] is not None and words[j - 1][0] is not None
               and _LIST_SEPARATOR.match(line[words[j - 1][2]:words[j][1]])):
            j += 1
        fields = [w[0] for w in words[k:j]]
        units = {c.unit.dimension for c in cands[k:j] if c.unit is not None}
        if j - k >= 2 and len(set(fields)) == len(fields) and len(units) == 1 and cands[j - 1].unit is not None:
            first = cands[k]
            merged = replace(first, min=None, typical=None, max=None, unit=cands[j - 1].unit,
                             unit_text=cands[j - 1].unit_text, alt_labels=list(first.alt_labels), merged=True,
                             printed=[p for c in cands[k:j] for p in c.printed],
                             value_text=line[words[k][1]:words[j - 1][2]].strip())
            factor = merged.unit.factor if merged.unit else 1.0
            for field, cand in zip(fields, cands[k:j], strict=True):
                value = next(v for v in cand.values() if v is not None)
                own = cand.unit.factor if cand.unit else factor
                setattr(merged, field, float(f"{value * own / factor:.12g}"))
            found.append(merged)
        k = j
    return found
