"""Does the row a value came from specify the quantity that was asked for?

A datasheet prints a quantity beside the words that turn it into another one: a *threshold* voltage beside the
maximum gate voltage, a collector *cut-off* current beside the collector current, a reference voltage
*deviation* beside the reference voltage, a gate *non-trigger* voltage beside the gate trigger voltage. A value
read from such a row has the right dimension and is printed where the quote says, so no other check notices it;
the row's own label does. ``other_quantity`` flags a value whose row names one of these qualifiers when the
request does not.

The label is the row's words left of the value's cell (name, symbol, conditions) with the lines of a name cell
that wraps above or below it, or, when the value opens the row, the words after it: a qualifier in the unit
column or in another parameter's row says nothing about this one.

A thermal resistance is a path's: junction to ambient, to case, to board, to lead. ``other_thermal_path`` flags
a value whose row names another path than the one the request names, in words (``Junction-to-Case``) or by
symbol (``θJA``, ``RthJC``, ``ΨJT``), and not the requested one.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from app.detectors.dimensions import printed
from app.detectors.grounding import GroundingResult
from app.detectors.row_alignment import visual_rows
from app.detectors.rules import (
    Context,
    Rule,
    Verdict,
    clean,
    flag,
    not_evaluable,
    submit_span_ids,
    unreadable_on_document,
)
from app.detectors.severity import Severity
from app.detectors.value_rows import located_cells, value_cell
from app.documents.index import DatasheetIndex

# Words that make a quantity into another one, each with the spellings that mean the same.
QUALIFIERS: dict[str, tuple[str, ...]] = {
    "threshold": ("threshold", "(th)", "vth"),
    "cut-off": ("cutoff", "cut-off", "cut off"),
    "deviation": ("deviation",),
    "drift": ("drift",),
    "temperature coefficient": ("coefficient", "tempco"),
    "bandwidth": ("bandwidth",),
    "hysteresis": ("hysteresis",),
    "rejection": ("rejection",),
    "regulation": ("regulation",),
    "non-trigger": ("non-trigger", "nontrigger"),
}
# Dashes a text layer prints for a hyphen (``Non−Trigger`` with a minus sign).
_DASHES = str.maketrans({c: " " for c in "-‐‑‒–—−"})
_NUMBER = re.compile(r"\d")
# Lines of a wrapped name cell lie within this many line heights of the value's row.
WRAP_LINES = 1.5


def mentions(text: str, spellings: tuple[str, ...]) -> bool:
    folded = " ".join(text.casefold().translate(_DASHES).split())
    return any(s.replace("-", " ") in folded for s in spellings)


def row_label(index: DatasheetIndex, grounding: GroundingResult, request: Mapping[str, Any] | None = None,
              value: Mapping[str, Any] | None = None) -> str | None:
    """The words of the value's row that name what the row specifies (``None`` when no row can be read)."""
    cell = value_cell(index, grounding, request, value)
    if cell is None:
        return None
    row = cell.row
    first = min((c.box for c in located_cells(index, grounding) if c.row is row), key=lambda b: b[0])
    left = [w for w in row.words if w.x1 <= first[0] + 1]
    # A name centred on a multi-line cell stands on the lines just above or below the value's row: lines with
    # nothing in the value columns, over a column the value's row leaves empty (else they are another
    # parameter's name, or prose).
    wrapped = [r for r in visual_rows(index, index.page(grounding.page))
               if r is not row and abs(r.y - row.y) <= WRAP_LINES * row.height
               and all(w.x1 <= first[0] + 1 for w in r.words)
               and not any(a.x0 < b.x1 and b.x0 < a.x1 for a in r.words for b in left)]
    if left:
        return " ".join([*(w.text for w in left), *(w.text for r in wrapped for w in r.words)])
    # The value opens the row ("20dB Bandwidth for ..."): the words after it, up to the next number.
    after = []
    for word in row.words:
        if word.x0 < first[2] - 1:
            continue
        if _NUMBER.search(word.text) and after:
            break
        after.append(word.text)
    return " ".join(after) or None


# The far end of a thermal path, in words and as the subscript letter of its symbol.
_PATH_ENDS = {"ambient": "ambient", "air": "ambient", "case": "case", "board": "board", "pcb": "board",
              "lead": "lead", "leads": "lead", "top": "top", "solder": "solder", "heatsink": "heatsink"}
_PATH_LETTERS = {"a": "ambient", "c": "case", "b": "board", "l": "lead", "t": "top", "s": "solder"}
_PATH_WORDS = re.compile(r"\bjunction\s*(?:to|-|–|−)+\s*(?:the\s+)?(ambient|air|case|board|pcb|leads?|top|solder"
                         r"|heat\s*sink)", re.IGNORECASE)
_PATH_SYMBOL = re.compile(r"(?:θ|Θ|R\s*θ|R\s*th|ψ|Ψ|theta)\s*[(_]?\s*j\s*[-–]?\s*([acblts])(?![a-z])", re.IGNORECASE)


def _row_labels(ctx: Context) -> Iterator[tuple[GroundingResult, str | None]]:
    """Each grounding with the name of the row its value was read from (``None`` where no row holds it)."""
    for grounding in ctx.groundings:
        value = printed(ctx.submission.values[grounding.value_index]) \
            if grounding.value_index < len(ctx.submission.values) else None
        yield grounding, row_label(ctx.document, grounding, ctx.request, value)


def thermal_paths(text: str) -> set[str]:
    """The far ends of the thermal paths a text names (``Junction-to-Ambient``, ``θJC``): empty when none."""
    ends = {_PATH_ENDS[m.group(1).casefold().replace(" ", "")] for m in _PATH_WORDS.finditer(text)}
    return ends | {_PATH_LETTERS[m.group(1).casefold()] for m in _PATH_SYMBOL.finditer(text)}


def _other_thermal_path(rule: Rule, ctx: Context) -> Verdict:
    if (unreadable := unreadable_on_document(rule, ctx)) is not None:
        return unreadable
    wanted = thermal_paths(" ".join(str(ctx.request.get(k) or "") for k in ("name", "symbol")))
    if not wanted:
        return not_evaluable(rule, "the request names no thermal path")
    found: list[dict[str, Any]] = []
    for grounding, label in _row_labels(ctx):
        paths = thermal_paths(label or "")
        if paths and not paths & wanted:
            found.append({"value_index": grounding.value_index, "row_label": label, "page": grounding.page,
                          "row_paths": sorted(paths), "requested_paths": sorted(wanted)})
    if not found:
        return clean(rule)
    first = found[0]
    return flag(rule, rule.finding(
        ctx, f"The row the value came from (“{first['row_label']}”, page {first['page']}) names the thermal path "
             f"junction to {', '.join(first['row_paths'])}, while “{ctx.request.get('name')}” asks for junction to "
             f"{', '.join(first['requested_paths'])}.",
        {"span_ids": submit_span_ids(ctx), "rows": found}))


def _other_quantity(rule: Rule, ctx: Context) -> Verdict:
    if (unreadable := unreadable_on_document(rule, ctx)) is not None:
        return unreadable
    asked = " ".join(str(ctx.request.get(k) or "") for k in ("name", "symbol"))
    found: list[dict[str, Any]] = []
    read = False
    for grounding, label in _row_labels(ctx):
        if label is None:
            continue
        read = True
        for qualifier, spellings in QUALIFIERS.items():
            if mentions(label, spellings) and not mentions(asked, spellings):
                found.append({"value_index": grounding.value_index, "qualifier": qualifier, "row_label": label,
                              "page": grounding.page})
    if not read:
        return not_evaluable(rule, "no reported value could be placed on a row")
    if not found:
        return clean(rule)
    first = found[0]
    return flag(rule, rule.finding(
        ctx, f"The row the value came from (“{first['row_label']}”, page {first['page']}) specifies a "
             f"{first['qualifier']}, which “{ctx.request.get('name')}” does not ask for: the value belongs to "
             "another quantity.",
        {"span_ids": submit_span_ids(ctx), "rows": found}))


QUANTITY_RULES: tuple[Rule, ...] = (
    Rule("other_quantity", "3", Severity.warning,
         "The value's row names a qualifier (threshold, cut-off, deviation, ...) the request does not ask for.",
         _other_quantity),
    Rule("other_thermal_path", "1", Severity.warning,
         "The value's row names another thermal path (junction to ambient, case, board) than the request.",
         _other_thermal_path),
)
