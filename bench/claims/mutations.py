"""Wrong claims planted next to right ones, to measure whether the claim checker can fail.

Each mutant changes one thing a careless claim author gets wrong:

* ``neighbour``: a stated number replaced by the nearest number the page prints just outside the quote (the
  row above or below);
* ``sign``: a stated number with its sign flipped;
* ``swap``: min and max exchanged;
* ``column``: a value read from a Min/Typ/Max table stated as another field (the Max cell claimed as typical);
* ``unit``: the unit replaced by one of another quantity (``kg``; ``mA`` for a claim already in kg);
* ``page``: the neighbouring page.

A mutant that would be a right claim is not planted: a sign flip to a number the quote prints with that sign
in that role (``±5`` read as min -5 or max +5), a page whose text also holds the quote.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from evaluation.claims import Claim

WRONG_UNIT, WRONG_UNIT_FOR_KG = "kg", "mA"
ROLE_OF_FIELD = {"min": "min", "typical": "typ", "max": "max"}  # claim field -> Min/Typ/Max column
_PLAIN_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![\w.]*\d)")


@dataclass(frozen=True)
class Mutant:
    claim_id: str
    kind: str
    claim: Claim


def _neighbour_number(claim: Claim, page_text: str, source: str) -> float | None:
    """The number printed nearest to the quote on the page (after it, else before), not printed in the quote."""
    start = page_text.find(source)
    if start < 0:
        return None
    in_quote = {float(m.group()) for m in _PLAIN_NUMBER.finditer(source)}
    stated = {abs(v) for v in claim.stated_fields.values()}
    after = [float(m.group()) for m in _PLAIN_NUMBER.finditer(page_text, start + len(source))]
    before = [float(m.group()) for m in _PLAIN_NUMBER.finditer(page_text[:start])][::-1]
    for number in after + before:
        if number not in in_quote and number not in stated:
            return number
    return None


def _in_order(claim: Claim) -> bool:
    stated = [v for v in (claim.min, claim.typical, claim.max) if v is not None]
    return stated == sorted(stated)


def mutants(claim: Claim, page_text: str, other_page: tuple[int, str] | None, source: str,
            printed_in_role: Callable[[float, str], bool], table_columns: dict[str, set[str]]) -> Iterator[Mutant]:
    """The mutants of one claim. ``printed_in_role(value, field)`` says whether the quote prints ``value`` as
    that field (so a sign flip it prints is no mutant); ``other_page`` is a neighbouring page (number, text);
    ``table_columns`` gives, per field, the Min/Typ/Max columns its value is printed in."""
    fields = claim.stated_fields
    field = next(iter(fields))
    neighbour = _neighbour_number(claim, page_text, source)
    if neighbour is not None:
        yield Mutant(claim.id, "neighbour", claim.model_copy(update={field: neighbour}))
    for name, stated in fields.items():
        if stated != 0 and not printed_in_role(-stated, name):
            yield Mutant(claim.id, "sign", claim.model_copy(update={name: -stated}))
            break
    if claim.min is not None and claim.max is not None and claim.min != claim.max:
        yield Mutant(claim.id, "swap", claim.model_copy(update={"min": claim.max, "max": claim.min}))
    for name, columns in table_columns.items():
        # moved to another column only where the values stay in order, so that the column check alone catches it
        moved = [claim.model_copy(update={name: None, other: fields[name]}) for other in ("min", "typical", "max")
                 if other not in fields and ROLE_OF_FIELD[other] not in columns]
        in_order = [m for m in moved if _in_order(m)]
        if in_order:
            yield Mutant(claim.id, "column", in_order[0])
            break
    wrong_unit = WRONG_UNIT_FOR_KG if (claim.unit or "").casefold() == WRONG_UNIT else WRONG_UNIT
    yield Mutant(claim.id, "unit", claim.model_copy(update={"unit": wrong_unit}))
    if other_page is not None and source not in other_page[1]:
        yield Mutant(claim.id, "page", claim.model_copy(update={"page": other_page[0]}))
