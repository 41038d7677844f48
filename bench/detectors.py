"""Detector figures: false positives on clean runs and recall on planted faults, with one-sided 95% bounds.

Every run goes through the production path: a job row, ``engines.run_parameter`` (the real loop, transport,
spans and dispatch record), the extraction stored as production stores it, ``review_extraction`` (the rules,
grounding against the *intended* datasheet, attribution). Faults are planted only where production lets things
vary: the phases (tools offered), the tool runner (what a tool returns), and the model (a scripted LiteLLM
provider, for answers the fault needs pinned).

Arms (one run per dev claim each):

* ``clean-reader``: the offline reader with the production tools. False-positive baseline of every rule.
* ``clean-scripted``: a scripted model that navigates and cross-checks, then submits the gold answer (value,
  page, verbatim quote). Baseline for grounding and for ``disagrees_with_reader`` against a correct answer.
* ``nav-withheld``: navigation tools withheld, the scripted model submits the gold answer (pinned correct).
* ``crosscheck-withheld``: the reader without ``search_text``/``extract_table_markdown``.
* ``tool-output-emptied``: the reader, every tool output emptied (keys kept, content blank).
* ``decoy``: the reader, every tool served from another datasheet of the set.
* ``wrong-row``: the scripted model navigates like ``clean-scripted`` but submits the value of the same column in
  the neighbouring table row (or line), keeping the quote it cited.
* ``wrong-row+quote``: the same, quoting the neighbouring row too (only the cross-check can see this one).

The cross-check (the offline reader's agentic answer on the intended datasheet, as the pipeline computes it for
any model other than the reader itself) is given to every arm except ``clean-reader``, where it would compare the
reader with itself. Bounds are one-sided 95% Clopper-Pearson, over claims (one run per claim and arm).

    .venv/bin/python bench/detectors.py [--limit N] [--arms a,b] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

CLAIMS = Path(os.environ.get("DSX_SHARED_DIR", REPO.parent / "shared")) / "eval" / "dev_claims.yaml"
DATASHEETS = CLAIMS.parent.parent / "datasheets"

ARM_NAMES = ("clean-reader", "clean-scripted", "nav-withheld", "crosscheck-withheld", "tool-output-emptied",
             "decoy", "wrong-row", "wrong-row+quote")
# What each fault arm is expected to raise: a run counts as detected when any of these rules flagged it.
EXPECTED = {
    "nav-withheld": ("tool_bypass",),
    "crosscheck-withheld": ("verification_skipped",),
    "tool-output-emptied": ("tool_read_failure",),
    "decoy": ("tool_content_mismatch", "quote_not_found", "value_not_in_quote", "disagrees_with_reader"),
    "wrong-row": ("quote_not_found", "value_not_in_quote", "disagrees_with_reader"),
    "wrong-row+quote": ("quote_not_found", "value_not_in_quote", "disagrees_with_reader"),
}
SCRIPTED_MODEL = "scripted/pinned-answer"


# ---------------------------------------------------------------------------------------------------------------
# A scripted model: a LiteLLM custom provider that plays a fixed list of tool calls, one per turn.


class _Script:
    calls: list[tuple[str, dict[str, Any]]] = []


def _register_scripted_provider() -> None:
    import litellm
    from litellm import CustomLLM, ModelResponse
    from litellm.utils import custom_llm_setup

    class ScriptedHandler(CustomLLM):
        def completion(self, *args: Any, **kwargs: Any) -> ModelResponse:
            turn = sum(1 for m in kwargs.get("messages") or [] if m.get("role") == "assistant")
            name, arguments = _Script.calls[min(turn, len(_Script.calls) - 1)]
            call = {"id": f"call_{turn}", "type": "function",
                    "function": {"name": name, "arguments": json.dumps(arguments)}}
            return ModelResponse(choices=[{"message": {"role": "assistant", "content": None, "tool_calls": [call]},
                                           "finish_reason": "tool_calls"}],
                                 usage={"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120})

    if not any(p.get("provider") == "scripted" for p in litellm.custom_provider_map):
        litellm.custom_provider_map.append({"provider": "scripted", "custom_handler": ScriptedHandler()})
        custom_llm_setup()


# ---------------------------------------------------------------------------------------------------------------
# Gold answers and neighbouring rows.


def gold_answer(claim: Any, quote: str | None = None, values: dict[str, float] | None = None) -> dict[str, Any]:
    fields = values if values is not None else {k: getattr(claim, k) for k in ("min", "typical", "max")
                                                if getattr(claim, k) is not None}
    return {"found": True, "values": [{**fields, "unit": claim.unit, "conditions": list(claim.conditions)}],
            "source_page": claim.page, "quote": quote or claim.source_text, "confidence": 0.9}


@dataclass
class _Row:
    y: float
    words: list[Any] = field(default_factory=list)

    @property
    def text(self) -> str:
        return " ".join(w.text for w in sorted(self.words, key=lambda w: w.x0))


def _visual_rows(page: Any) -> list[_Row]:
    rows: list[_Row] = []
    for word in sorted(page.words, key=lambda w: ((w.y0 + w.y1) / 2, w.x0)):
        middle, height = (word.y0 + word.y1) / 2, max(word.y1 - word.y0, 1.0)
        if rows and abs(rows[-1].y - middle) <= 0.35 * height:
            rows[-1].words.append(word)
        else:
            rows.append(_Row(middle, [word]))
    return rows


def _numbers(text: str) -> list[float]:
    from app.detectors.grounding import numbers_in

    return [n.values[0] for n in numbers_in(text)]


def neighbouring_row(claim: Any, index: Any) -> tuple[dict[str, float], str] | None:
    """The claim's fields read from the same column one visual row below (else above), and that row's text.

    The value words are found inside the gold quote's located boxes; a neighbour word is taken in the same
    column (horizontal overlap) of the nearest row that has one, else the nearest numeric word one row away.
    """
    from app.detectors.grounding import ground_value

    fields = {k: getattr(claim, k) for k in ("min", "typical", "max") if getattr(claim, k) is not None}
    located = ground_value(index, 0, {**fields, "unit": claim.unit}, claim.source_text, [claim.page])
    if not located.boxes:
        return None
    page = index.page(located.page)
    rows = _visual_rows(page)

    def inside(word: Any) -> bool:
        return any(b[0] - 1 <= word.x0 and word.x1 <= b[2] + 1 and b[1] - 1 <= word.y0 and word.y1 <= b[3] + 1
                   for b in located.boxes)

    anchors: dict[str, tuple[int, Any, int]] = {}  # field -> (row index, word, position of the number in it)
    used: set[tuple[int, int]] = set()
    for name, value in fields.items():
        for r, row in enumerate(rows):
            for word in sorted(row.words, key=lambda w: w.x0):
                if not inside(word):
                    continue
                hits = [i for i, n in enumerate(_numbers(word.text))
                        if abs(abs(n) - abs(value)) <= 1e-9 * max(1, abs(value)) and (id(word), i) not in used]
                if hits:
                    anchors[name] = (r, word, hits[0])
                    used.add((id(word), hits[0]))
                    break
            if name in anchors:
                break
    if len(anchors) != len(fields):
        return None
    distinct_anchors = len({(id(a[1]), a[2]) for a in anchors.values()})
    # Same column first (horizontal overlap), up to four rows away; then the nearest number one row away.
    attempts = [(step, True) for step in (1, -1, 2, -2, 3, -3, 4, -4)] + [(1, False), (-1, False)]
    for step, same_column in attempts:
        planted: dict[str, float] = {}
        picked: set[tuple[int, int]] = set()
        rows_used: set[int] = set()
        for name, (r, word, position) in anchors.items():
            target = r + step
            if not 0 <= target < len(rows):
                break
            candidates = [(w, _numbers(w.text)) for w in rows[target].words]
            candidates = [(w, ns) for w, ns in candidates if ns]
            if not candidates:
                break
            pool = [(w, ns) for w, ns in candidates if min(w.x1, word.x1) - max(w.x0, word.x0) > 0]
            if not same_column:
                pool = pool or candidates
            if not pool:
                break
            chosen, numbers = min(pool, key=lambda c: abs((c[0].x0 + c[0].x1) / 2 - (word.x0 + word.x1) / 2))
            slot = min(position, len(numbers) - 1)
            number = numbers[slot]
            picked.add((id(chosen), slot))
            planted[name] = number
            rows_used.add(target)
        # A real neighbouring row has as many distinct value cells as the original row.
        if len(planted) == len(fields) and len(picked) == distinct_anchors \
                and any(abs(planted[k] - fields[k]) > 1e-9 for k in fields):
            return planted, " ".join(rows[r].text for r in sorted(rows_used))
    return None


# ---------------------------------------------------------------------------------------------------------------
# Running one cell through the production path.


@dataclass
class Cell:
    claim_id: str
    arm: str
    answered: bool
    found: bool
    flags: list[dict[str, Any]]
    evaluable: dict[str, bool]
    grounding: list[dict[str, Any]]
    error_code: str | None
    note: str | None = None

    @property
    def rules(self) -> set[str]:
        return {f["rule"] for f in self.flags}


def _run_cell(claim: Any, arm: str, index: Any, *, model: Any, engine: str, phases: Any = None,
              tool_runner: Any = None, cross: Any = None, note: str | None = None) -> tuple[Cell, Any]:
    from sqlalchemy import select

    from app.agent import engines
    from app.agent.schemas import RunContext
    from app.db import session_scope
    from app.detectors.rules import Context, evaluate
    from app.dispatch import telemetry
    from app.flows import extraction as extraction_flow
    from app.flows import review
    from app.jobs.service import create_job
    from app.review.models import Flag, Grounding
    from evaluation.claims import request_for

    request = request_for(claim)
    with session_scope() as session:
        job, _ = create_job(session, data=index.path.read_bytes(), filename=index.path.name,
                            parameters=[request.model_dump()], engine=engine, model=model.alias,
                            idempotency_key=f"{arm}:{claim.id}:{time.time_ns()}")
        job_id, parameter_id = job.id, job.parameters[0].id
    outcome = engines.run_parameter(index=index, request=request, model=model, engine=engine,
                                    context=RunContext(job_id=job_id, parameter_id=parameter_id, tenant="bench"),
                                    phases=phases, tool_runner=tool_runner)
    telemetry.flush()
    with session_scope() as session:
        extraction, cross_row, _ = extraction_flow.record_answer(session, job_id, parameter_id, outcome, cross, index)
        flags = [{"rule": f.rule, "severity": f.severity, "message": f.message, "evidence": f.evidence}
                 for f in session.scalars(select(Flag).where(Flag.extraction_id == extraction.id))]
        # Evaluability is not stored; recompute it from the same inputs the review used.
        record = review.record_of(session, extraction)
        submission = review.submission_of(extraction)
        verdicts = evaluate(Context(record=record, submission=submission, request=request.model_dump(),
                                    groundings=[], cross_check=review.submission_of(cross_row) if cross_row else None,
                                    error_code=extraction.error_code, engine=extraction.engine, document=index))
        grounding = [{"outcome": g.outcome, "method": g.method, "page": g.page, "detail": g.detail}
                     for g in session.scalars(select(Grounding).where(Grounding.extraction_id == extraction.id))]
    cell = Cell(claim.id, arm, outcome.extraction is not None, bool(outcome.extraction and outcome.extraction.found),
                flags, {v.rule: v.evaluable for v in verdicts}, grounding, outcome.error_code, note)
    return cell, outcome


# ---------------------------------------------------------------------------------------------------------------
# Figures.


def _bound_text(k: int, n: int, kind: str) -> str:
    from evaluation.stats import lower_bound, upper_bound

    if n == 0:
        return f"{k}/{n}      (no runs)"
    if kind == "fp":
        return f"{k}/{n} = {k / n:6.1%}  upper95 {upper_bound(k, n):6.1%}"
    return f"{k}/{n} = {k / n:6.1%}  lower95 {lower_bound(k, n):6.1%}"


def _grounding_flag_justified(cell: Cell) -> bool:
    """Whether a clean run's grounding flags are deserved, judged independently of how grounding searched:
    ``value_not_in_quote`` when no missing number is printed in the quote string itself; ``quote_not_found``
    when no tool ever showed the model that quote (else the search failed on text the document did contain)."""
    from app.detectors.grounding import numbers_in

    for flag in cell.flags:
        if flag["rule"] == "quote_not_found" and flag["evidence"].get("quote_seen_in_tool_output"):
            return False
        if flag["rule"] != "value_not_in_quote":
            continue
        for value in flag["evidence"].get("values", []):
            printed = [abs(v) for n in numbers_in(value["detail"].get("quote") or "") for v in n.values]
            missing = (value["detail"].get("missing_numbers") or {}).values()
            if any(any(abs(abs(m) - p) <= 1e-9 * max(1.0, p) for p in printed) for m in missing):
                return False
    return True


def report(cells: list[Cell], seconds: float) -> dict[str, Any]:
    from app.detectors.rules import DISPATCH_RULES, RULES
    from evaluation.stats import rate

    out: dict[str, Any] = {"seconds": round(seconds, 1), "arms": {}}
    by_arm: dict[str, list[Cell]] = {}
    for cell in cells:
        by_arm.setdefault(cell.arm, []).append(cell)
    print(f"\ndetector benchmark: {len(cells)} runs in {seconds:.0f}s (one run per claim and arm)\n")
    for arm in ARM_NAMES:
        members = by_arm.get(arm)
        if not members:
            continue
        answered = [c for c in members if c.answered]
        print(f"== {arm}: {len(members) - sum(1 for c in members if c.note)} runs, {len(answered)} answered "
              f"({sum(c.found for c in answered)} found=true)"
              + (f", {sum(1 for c in members if c.note)} claim(s) where the fault could not be planted"
                 if any(c.note for c in members) else ""))
        entry: dict[str, Any] = {"runs": len(members), "answered": len(answered)}
        if arm.startswith("clean"):
            entry["false_positives"] = {}
            for rule in RULES:
                evaluable = [c for c in answered if c.evaluable.get(rule.name)]
                if not evaluable:
                    continue
                k = sum(1 for c in evaluable if rule.name in c.rules)
                kind = "dispatch" if rule.name in DISPATCH_RULES else "answer"
                print(f"   FP {rule.name:<24} [{kind:<8}] {_bound_text(k, len(evaluable), 'fp')}")
                entry["false_positives"][rule.name] = rate(k, len(evaluable)).to_dict()
            for c in answered:
                for flag in c.flags:
                    print(f"     flagged {c.claim_id}: {flag['rule']}: {flag['message'][:150]}")
            dispatch = [c for c in answered if c.rules & set(DISPATCH_RULES)]
            print(f"   runs with any dispatch flag: {_bound_text(len(dispatch), len(answered), 'fp')}")
            grounded_flags = [c for c in answered if c.rules & {"quote_not_found", "value_not_in_quote"}]
            justified = [c for c in grounded_flags if _grounding_flag_justified(c)]
            print(f"   grounding flags: {len(grounded_flags)} run(s), {len(justified)} where the number is "
                  f"genuinely not in the quoted text")
            for c in grounded_flags:
                if c not in justified:
                    print(f"     unjustified? {c.claim_id}: "
                          + "; ".join(f["message"] for f in c.flags if "quote" in f["rule"]))
            entry["dispatch_flagged"] = len(dispatch)
            entry["grounding_flagged"], entry["grounding_justified"] = len(grounded_flags), len(justified)
        else:
            expected = EXPECTED[arm]
            planted = [c for c in answered if not c.note]
            detected = [c for c in planted if c.rules & set(expected)]
            print(f"   recall ({' | '.join(expected)}): {_bound_text(len(detected), len(planted), 'recall')}")
            valued = [c for c in planted if c.found]
            if valued and len(valued) != len(planted):
                hit = [c for c in valued if c in detected]
                print(f"     on value answers (found=true): {_bound_text(len(hit), len(valued), 'recall')}")
                rest = _bound_text(len(detected) - len(hit), len(planted) - len(valued), "recall")
                print(f"     on not-found answers: {rest}")
            per_rule = Counter(r for c in planted for r in c.rules if r in expected)
            for rule in expected:
                print(f"     {rule:<24} {per_rule[rule]}/{len(planted)}")
            missed = [c.claim_id for c in planted if c not in detected]
            if missed:
                print(f"   missed: {', '.join(missed)}")
            entry["recall"] = rate(len(detected), len(planted)).to_dict()
            entry["per_rule"] = dict(per_rule)
            entry["missed"] = missed
            others = Counter(r for c in planted for r in c.rules if r not in expected)
            if others:
                print(f"   other flags: {dict(others)}")
        out["arms"][arm] = entry
        print()
    return out


# ---------------------------------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, default=None, help="Only the first N claims")
    parser.add_argument("--arms", default=",".join(ARM_NAMES), help="Comma-separated arms")
    parser.add_argument("--json", type=Path, default=None, help="Also write the figures as JSON here")
    args = parser.parse_args()
    arms = [a for a in args.arms.split(",") if a]
    unknown = set(arms) - set(ARM_NAMES)
    if unknown:
        parser.error(f"unknown arms: {', '.join(sorted(unknown))}")

    scratch = Path(tempfile.mkdtemp(prefix="dsx-bench-detectors-"))
    os.environ["DSX_DATA_DIR"] = str(scratch / "var")
    os.environ.pop("DSX_DATABASE_URL", None)
    # The scripted model is an ordinary entry of the models file, so jobs name it like any other model.
    models_file = scratch / "models.yaml"
    models_file.write_text(f"model_list:\n  - model_name: {SCRIPTED_MODEL}\n"
                           f"    litellm_params: {{model: {SCRIPTED_MODEL}}}\n")
    os.environ["DSX_MODELS_FILE"] = str(models_file)

    from app import migrate
    from app.agent.phases import extraction_phase, without_tools
    from app.agent.registry import resolve_model
    from app.agent.tools import DocumentToolRunner
    from app.config import OFFLINE_MODEL
    from app.dispatch import semconv as sc
    from app.documents.cache import open_index
    from evaluation.arms import NullToolRunner
    from evaluation.claims import load_claims, resolve_document

    migrate.upgrade()
    _register_scripted_provider()
    reader = resolve_model(OFFLINE_MODEL)
    scripted = resolve_model(SCRIPTED_MODEL)

    claim_set = load_claims(CLAIMS)
    claims = claim_set.claims[: args.limit] if args.limit else claim_set.claims
    documents = dict(claim_set.documents)
    keys = sorted(documents)
    indexes: dict[str, Any] = {}

    def index_of(key: str) -> Any:
        if key not in indexes:
            indexes[key] = open_index(resolve_document(documents[key], DATASHEETS))
        return indexes[key]

    def navigation_script(claim: Any, answer: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
        """A careful reader's calls: overview, the page's tables, a search for the row, the page's text."""
        words = " ".join(claim.source_text.split()[:4])
        return [("build_datasheet", {}), ("extract_table_markdown", {"page": claim.page}),
                ("search_text", {"query": words}),
                ("get_section_text", {"start_page": claim.page, "end_page": claim.page}), (sc.SUBMIT_TOOL, answer)]

    started = time.perf_counter()
    cells: list[Cell] = []
    for number, claim in enumerate(claims, 1):
        index = index_of(claim.document)
        t0 = time.perf_counter()
        reference_cell, reference = _run_cell(claim, "clean-reader", index, model=reader, engine="agentic")
        if "clean-reader" in arms:
            cells.append(reference_cell)
        cross = reference  # the pipeline's cross-check: the reader, agentic, on the intended datasheet

        def scripted_cell(arm: str, script: list[tuple[str, dict[str, Any]]], phases: Any = None,
                          claim: Any = claim, index: Any = index, cross: Any = cross) -> None:
            _Script.calls = script
            cells.append(_run_cell(claim, arm, index, model=scripted, engine="agentic", phases=phases,
                                   cross=cross)[0])

        if "clean-scripted" in arms:
            scripted_cell("clean-scripted", navigation_script(claim, gold_answer(claim)))
        if "nav-withheld" in arms:
            scripted_cell("nav-withheld", [(sc.SUBMIT_TOOL, gold_answer(claim))],
                          phases=[without_tools(extraction_phase(), sc.NAVIGATION_TOOLS)])
        if "crosscheck-withheld" in arms:
            cells.append(_run_cell(claim, "crosscheck-withheld", index, model=reader, engine="agentic",
                                   phases=[without_tools(extraction_phase(), sc.CROSS_CHECK_TOOLS)], cross=cross)[0])
        if "tool-output-emptied" in arms:
            cells.append(_run_cell(claim, "tool-output-emptied", index, model=reader, engine="agentic",
                                   tool_runner=NullToolRunner(DocumentToolRunner(index)), cross=cross)[0])
        if "decoy" in arms:
            decoy_key = keys[(keys.index(claim.document) + 1) % len(keys)]
            cells.append(_run_cell(claim, "decoy", index, model=reader, engine="agentic",
                                   tool_runner=DocumentToolRunner(index_of(decoy_key)), cross=cross)[0])
        if "wrong-row" in arms or "wrong-row+quote" in arms:
            neighbour = neighbouring_row(claim, index)
            for arm in ("wrong-row", "wrong-row+quote"):
                if arm not in arms:
                    continue
                if neighbour is None:
                    cells.append(Cell(claim.id, arm, False, False, [], {}, [], None,
                                      note="no neighbouring row with another value in the same column"))
                    continue
                values, row_text = neighbour
                answer = gold_answer(claim, quote=claim.source_text if arm == "wrong-row" else row_text,
                                     values=values)
                scripted_cell(arm, navigation_script(claim, answer))
        print(f"[{number}/{len(claims)}] {claim.id}: {time.perf_counter() - t0:.1f}s", file=sys.stderr)

    figures = report(cells, time.perf_counter() - started)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
