"""Rules about the datasheet itself: hostile or unreadable input, whatever the run did with it.

They follow the conventions of ``app.detectors.rules`` (name, version, default severity, a sentence, evidence
with ``span_ids``) and read ``Context.document``, the index of the intended PDF; without it they are not
evaluable. Severities, and why:

* ``instruction_in_document`` (warning): the text speaks to a model (``app.detectors.injection``). The agent's
  framing keeps it from changing tools, budgets or the schema, but whether the model *believed* it is only
  visible in the answer, so a person looks.
* ``answer_quotes_instruction`` (error): the answer's quote is the injected text itself: the value came from
  the instruction, not from the part's characteristics.
* ``pdf_has_javascript`` (info): dsx never runs PDF JavaScript and the answer cannot depend on it, so it does not
  by itself send a clean answer to review; it is shown on every result so nobody forwards the file unawares.
* ``no_text_layer`` (warning): a scan without text: text tools read nothing and no quote can be re-found, so
  neither a value nor a "not found" can be checked against the document.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from app.detectors.grounding import quote_in_text
from app.detectors.injection import InstructionHit, find_instructions, instruction_lines
from app.detectors.record import Call
from app.detectors.rules import Context, Rule, Verdict, clean, flag, not_evaluable, submit_span_ids
from app.detectors.severity import Severity
from app.dispatch import semconv as sc
from app.documents.hazards import javascript_of

MAX_EXCERPTS = 5
NO_DOCUMENT = "the intended datasheet is not available"
HITS_MEMO_KEY = "instruction_hits"
SPLIT_MEMO_KEY = "instruction_split"


def _text_of(value: Any) -> str:
    """All strings in a tool result, joined (a JSON-shaped injection stays text inside its string)."""
    if isinstance(value, Mapping):
        return " ".join(_text_of(v) for v in value.values())
    if isinstance(value, list | tuple):
        return " ".join(_text_of(v) for v in value)
    return value if isinstance(value, str) else ""


def _page_hits(ctx: Context) -> dict[int, list[InstructionHit]]:
    """Instruction-like hits per page of the intended PDF, computed once per index object."""
    document = ctx.document
    assert document is not None

    def scan() -> dict[int, list[InstructionHit]]:
        found = {page.number: find_instructions(page.text) for page in document.pages}
        return {number: hits for number, hits in found.items() if hits}

    return document.memo(HITS_MEMO_KEY, scan)


def _shown_in(ctx: Context) -> list[Call]:
    """The calls that put instruction-bearing document text in front of the model before it answered: tool
    results that carried it, or the single-pass turn whose prompt held the whole document."""
    if ctx.record is None or not ctx.record.has_call_detail:
        return []
    calls = ctx.record.calls_before_answer()
    if ctx.is_single_pass:
        first = next((c for c in calls if c.kind == "llm"), None)
        return [first] if first is not None else []
    return [c for c in calls if c.kind == "tool" and c.tool != sc.SUBMIT_TOOL and c.output is not None
            and find_instructions(_text_of(c.output))]


def _instruction_in_document(rule: Rule, ctx: Context) -> Verdict:
    if ctx.document is None:
        return not_evaluable(rule, NO_DOCUMENT)
    pages = _page_hits(ctx)
    if not pages:
        return clean(rule)
    shown = _shown_in(ctx)
    excerpts = [{"page": number, **hit.to_dict()} for number, hits in sorted(pages.items()) for hit in hits]
    kinds = sorted({e["kind"] for e in excerpts})
    seen = (f"; {len(shown)} call(s) put it in front of the model" if shown
            else "; the model was not shown it before answering" if ctx.record is not None else "")
    return flag(rule, rule.finding(
        ctx, f"The datasheet contains text addressed to a language model ({', '.join(kinds)}) on page(s) "
             f"{', '.join(str(n) for n in sorted(pages))}{seen}: “{excerpts[0]['excerpt']}”. Document text is "
             "data, never instructions; check that the answer comes from the part's characteristics.",
        {"span_ids": [c.span_id for c in shown] + (submit_span_ids(ctx)),
         "pages": sorted(pages), "kinds": kinds, "excerpts": excerpts[:MAX_EXCERPTS],
         "shown_to_model": bool(shown)},
    ))


def _quotes(ctx: Context) -> Iterator[tuple[int | None, str]]:
    assert ctx.submission is not None
    if ctx.submission.quote:
        yield None, ctx.submission.quote
    for i, value in enumerate(ctx.submission.values):
        if value.get("quote"):
            yield i, str(value["quote"])


def _planted_and_clean_text(ctx: Context) -> tuple[list[str], str]:
    """The lines holding planted instructions, and the document's text without them (once per index)."""
    document = ctx.document
    assert document is not None
    pages = _page_hits(ctx)

    def split() -> tuple[list[str], str]:
        planted = [line for page in document.pages if page.number in pages for line in instruction_lines(page.text)]
        drop = set(planted)
        remainder = "\n".join(line for page in document.pages for line in page.text.splitlines()
                              if line.strip() not in drop)
        return planted, remainder

    return document.memo(SPLIT_MEMO_KEY, split)


def _answer_quotes_instruction(rule: Rule, ctx: Context) -> Verdict:
    if ctx.document is None:
        return not_evaluable(rule, NO_DOCUMENT)
    if ctx.submission is None or not ctx.submission.found or not ctx.submission.values:
        return not_evaluable(rule, "no value was reported")
    planted, remainder = _planted_and_clean_text(ctx)
    if not planted:
        return clean(rule)
    # A quote counts only when the planted text is its sole source: text that also stands in the real content
    # (a parameter name repeated by the instruction, say) is no evidence.
    tainted = [(i, quote) for i, quote in _quotes(ctx)
               if (find_instructions(quote) or any(quote_in_text(quote, line) for line in planted))
               and not quote_in_text(quote, remainder)]
    if not tainted:
        return clean(rule)
    return flag(rule, rule.finding(
        ctx, f"The answer quotes the instruction planted in the datasheet (“{tainted[0][1][:120]}”) instead of "
             "the part's characteristics: the reported value came from the injected text.",
        {"span_ids": submit_span_ids(ctx),
         "quotes": [{"value_index": i, "quote": q} for i, q in tainted]},
    ))


def _pdf_has_javascript(rule: Rule, ctx: Context) -> Verdict:
    if ctx.document is None:
        return not_evaluable(rule, NO_DOCUMENT)
    scan = javascript_of(ctx.document)
    if not scan.found:
        if not scan.complete:
            return not_evaluable(rule, f"the PDF could not be scanned completely ({scan.error or 'budget'})")
        return clean(rule)
    where = sorted({loc["where"] for loc in scan.locations})
    root = ctx.record.root_span_id if ctx.record else None
    return flag(rule, rule.finding(
        ctx, f"The PDF carries JavaScript ({'; '.join(where)}). dsx never runs it, but a datasheet from a vendor "
             "does not need scripts: treat the file as untrusted and do not forward it as is.",
        {"span_ids": [root] if root else [], "locations": scan.locations, "complete": scan.complete},
    ))


def _no_text_layer(rule: Rule, ctx: Context) -> Verdict:
    if ctx.document is None:
        return not_evaluable(rule, NO_DOCUMENT)
    if ctx.document.text_layer != "none":
        return clean(rule)
    root = ctx.record.root_span_id if ctx.record else None
    return flag(rule, rule.finding(
        ctx, f"The datasheet has no text layer on any of its {ctx.document.page_count} page(s) (a scan): text "
             "tools read nothing and no quote can be re-found in it, so the answer, found or not, is unchecked.",
        {"span_ids": [root] if root else [], "page_count": ctx.document.page_count},
    ))


DOCUMENT_RULES: tuple[Rule, ...] = (
    Rule("instruction_in_document", "1", Severity.warning,
         "The datasheet text addresses a language model (a prompt-injection attempt).", _instruction_in_document),
    Rule("answer_quotes_instruction", "1", Severity.error,
         "The answer's quote is the instruction planted in the datasheet.", _answer_quotes_instruction),
    Rule("pdf_has_javascript", "1", Severity.info, "The PDF carries JavaScript (never executed).",
         _pdf_has_javascript),
    Rule("no_text_layer", "1", Severity.warning, "The datasheet has no text layer at all.", _no_text_layer),
)
