"""Trust figures: do the review layer's flags separate right answers from wrong ones?

For every answered value, graded with ``evaluation.grading`` (``exact``: every number the claim states, in
the claim's unit), the confusion matrix of the review verdict, where *flagged* means at least one flag of severity
warning or above (what sends a job to ``needs_review``):

    correct-unflagged   correct-flagged (false alarm)   wrong-flagged (caught)   wrong-unflagged (missed)

and the declines beside it. One table per claim set and per answer source:

* the offline reader, agentic and single-pass, on every claim file: each claim goes through the production path
  (a job row, ``engines.run_parameter``, ``app.flows.extraction.record_answer`` with its review);
* the real hosted-model cells beside ``real_model_cells/claims.yaml``, audited through ``dsx detect``'s path
  (``app.cli.detect.detect_trace`` over per-cell records, grounded against the intended datasheet): clean cells
  with a quote (false alarms on correct answers) and the answered closed-book, wrong-content and null-tool cells
  (each of which should be flagged).

Goals on every set: wrong-unflagged <= 5 % of answered values, correct-flagged <= 5 % of correct answers.
The confidence calibration of the offline reader (confidence bin -> share exact) is printed at the end.

    .venv/bin/python bench/trust.py [--claims FILE ...] [--engines agentic,single-pass] [--limit N] [--json OUT]
                                    [--list] [--name-only] [--gold]

Stress modes, for finding where a rule's evidence is thin: ``--name-only`` asks every claim by its name alone
(no unit, no conditions), as terse requests come; ``--gold`` runs no reader and audits every claim's own answer
and verbatim source text instead (all right, quoted as the claim authors cut them: every flag is a false alarm).
``--json`` keeps every flag with its message and evidence, so a false alarm or a miss can be studied.

``--claims`` is repeatable; by default every ``bench/claims/*.yaml`` that is not sealed (a sealed set is measured
only by naming it: ``--list`` on it would show what it holds to whoever tunes the rules), the shared
``eval/dev_claims.yaml`` and ``eval/real_model_cells/claims.yaml``. Datasheets are resolved through each file's
``documents`` map, in ``datasheets/`` and ``datasheets/corpus/`` of the shared directory (``DSX_SHARED_DIR``,
default ``../shared``).
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

SHARED = Path(os.environ.get("DSX_SHARED_DIR", REPO.parent / "shared"))
DATASHEETS = SHARED / "datasheets"
CELLS = SHARED / "eval" / "real_model_cells"
# Answers of these arms come from memory or another document: every answered one should be flagged.
RECALL_ARMS = ("closed_book", "wrong_content", "null_tool")
CALIBRATION_BINS = ((0.0, 0.3), (0.3, 0.5), (0.5, 0.7), (0.7, 0.85), (0.85, 1.01))
GOAL = 0.05


def default_claim_files() -> list[Path]:
    opened = [path for path in sorted((REPO / "bench" / "claims").glob("*.yaml")) if not is_sealed(path)]
    return [*opened, SHARED / "eval" / "dev_claims.yaml", CELLS / "claims.yaml"]


def is_sealed(path: Path) -> bool:
    import yaml

    return bool((yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("sealed"))


def datasheet_dirs() -> list[Path]:
    return [DATASHEETS, DATASHEETS / "corpus"]


def resolve(document: Any) -> Path:
    from app.errors import InvalidInput
    from evaluation.claims import resolve_document

    last: Exception | None = None
    for directory in datasheet_dirs():
        try:
            return resolve_document(document, directory)
        except InvalidInput as exc:
            last = exc
    assert last is not None
    raise last


# ---------------------------------------------------------------------------------------------------------------
# Outcomes and tables.


@dataclass
class Answer:
    key: str
    found: bool
    correct: bool | None  # None: no gold to grade against (recall arms)
    flags: list[dict[str, Any]] = field(default_factory=list)
    confidence: float | None = None
    # What was answered and what the claim states, for ``--list`` and the JSON output.
    detail: dict[str, Any] = field(default_factory=dict)

    @property
    def flagged(self) -> bool:
        return any(f["severity"] in ("warning", "error") for f in self.flags)

    @property
    def rules(self) -> set[str]:
        return {f["rule"] for f in self.flags if f["severity"] in ("warning", "error")}


def confusion(answers: list[Answer]) -> dict[str, Any]:
    answered = [a for a in answers if a.found]
    graded = [a for a in answered if a.correct is not None]
    correct = [a for a in graded if a.correct]
    wrong = [a for a in graded if not a.correct]
    table = {
        "runs": len(answers), "declined": len(answers) - len(answered), "answered": len(answered),
        "correct_unflagged": sum(not a.flagged for a in correct), "correct_flagged": sum(a.flagged for a in correct),
        "wrong_flagged": sum(a.flagged for a in wrong), "wrong_unflagged": sum(not a.flagged for a in wrong),
    }
    table["wrong_unflagged_share"] = table["wrong_unflagged"] / len(graded) if graded else None
    table["correct_flagged_share"] = table["correct_flagged"] / len(correct) if correct else None
    table["false_alarm_rules"] = dict(Counter(r for a in correct if a.flagged for r in a.rules))
    table["catching_rules"] = dict(Counter(r for a in wrong if a.flagged for r in a.rules))
    table["missed"] = [a.key for a in wrong if not a.flagged]
    table["false_alarms"] = [a.key for a in correct if a.flagged]
    table["answers"] = [{"key": a.key, "found": a.found, "correct": a.correct, "flags": a.flags,
                         "confidence": a.confidence, **a.detail} for a in answers]
    return table


def _claim_detail(claim: Any) -> dict[str, Any]:
    """What a claim states, in the shape the listing prints."""
    stated = {"min", "typical", "max", "unit", "conditions", "page", "source_text"}
    return {"document": claim.document, "parameter": claim.parameter,
            "gold": claim.model_dump(include=stated, exclude_none=True)}


def request_of(claim: Any, terse: bool) -> Any:
    """The request a claim is asked as: in full, or (``terse``) its name only, without unit or conditions."""
    from evaluation.claims import request_for

    full = request_for(claim)
    return full.model_copy(update={"unit": None, "conditions": []}) if terse else full


def counts_only(table: dict[str, Any]) -> dict[str, Any]:
    """A sealed set's table without what would open it: which claims, what was answered, which rules fired."""
    hidden = {"answers", "missed", "false_alarms", "false_alarm_rules", "catching_rules"}
    return {key: value for key, value in table.items() if key not in hidden} | {
        "missed": [], "false_alarms": [], "false_alarm_rules": {}, "catching_rules": {}}


def print_listing(table: dict[str, Any]) -> None:
    """Every wrong answer that went unflagged and every correct answer that was flagged, with what was answered,
    what the claim states and the flags raised: the material to group the review layer's errors by cause."""
    by_key = {a["key"]: a for a in table["answers"]}
    for title, keys in (("missed (wrong, unflagged)", table["missed"]),
                        ("false alarm (correct, flagged)", table["false_alarms"])):
        for key in keys:
            answer = by_key[key]
            print(f"   -- {title}: {key}  [{answer.get('document')}] {answer.get('parameter')!r}")
            print(f"      claim:  {json.dumps(answer.get('gold'), ensure_ascii=False)}")
            print(f"      answer: {json.dumps(answer.get('values'), ensure_ascii=False)}  page {answer.get('page')}"
                  f"  confidence {answer.get('confidence')}")
            if answer.get("quote"):
                print(f"      quote:  {' '.join(str(answer['quote']).split())[:300]}")
            for flag in answer["flags"]:
                if flag["severity"] in ("warning", "error"):
                    print(f"      flag {flag['rule']}: {' '.join(str(flag.get('message') or '').split())[:400]}")


def _share(value: float | None) -> str:
    return "   -  " if value is None else f"{value:6.1%}"


def print_table(title: str, table: dict[str, Any]) -> None:
    wu, cf = table["wrong_unflagged_share"], table["correct_flagged_share"]
    goal = ("meets both goals" if wu is not None and cf is not None and wu <= GOAL and cf <= GOAL
            else "goal missed: " + ", ".join(
                n for n, v in (("wrong-unflagged", wu), ("correct-flagged", cf)) if v is not None and v > GOAL)
            if (wu or 0) > GOAL or (cf or 0) > GOAL else "")
    print(f"== {title}: {table['runs']} runs, {table['answered']} answered, {table['declined']} declined  {goal}")
    print(f"   correct-unflagged {table['correct_unflagged']:4d}   correct-flagged {table['correct_flagged']:4d} "
          f"({_share(cf)} of correct)")
    print(f"   wrong-flagged     {table['wrong_flagged']:4d}   wrong-unflagged {table['wrong_unflagged']:4d} "
          f"({_share(wu)} of answered)")
    if table["false_alarm_rules"]:
        print(f"   false alarms by rule: {table['false_alarm_rules']}")
    if table["catching_rules"]:
        print(f"   wrong answers caught by rule: {table['catching_rules']}")
    if table["false_alarms"]:
        print(f"   false alarms: {', '.join(table['false_alarms'][:12])}"
              f"{' …' if len(table['false_alarms']) > 12 else ''}")
    if table["missed"]:
        print(f"   missed: {', '.join(table['missed'][:12])}{' …' if len(table['missed']) > 12 else ''}")


def calibration(answers: list[Answer]) -> list[dict[str, Any]]:
    rows = []
    graded = [a for a in answers if a.found and a.correct is not None and a.confidence is not None]
    for low, high in CALIBRATION_BINS:
        members = [a for a in graded if low <= a.confidence < high]  # type: ignore[operator]
        exact = sum(bool(a.correct) for a in members)
        rows.append({"bin": [low, min(high, 1.0)], "n": len(members), "exact": exact,
                     "share_exact": exact / len(members) if members else None})
    return rows


def print_calibration(rows: list[dict[str, Any]]) -> None:
    print("== calibration of the offline reader's confidence (all claim sets, both engines): bin -> share exact")
    for row in rows:
        low, high = row["bin"]
        print(f"   [{low:.2f}, {high:.2f}): n={row['n']:4d}  exact {row['exact']:4d}  "
              f"share {_share(row['share_exact'])}")


# ---------------------------------------------------------------------------------------------------------------
# The offline reader through the production path.


def reader_answers(claim_set: Any, engine: str, limit: int | None, terse: bool = False) -> list[Answer]:
    from sqlalchemy import select

    from app.agent import engines
    from app.agent.registry import resolve_model
    from app.agent.schemas import RunContext
    from app.config import OFFLINE_MODEL
    from app.db import session_scope
    from app.dispatch import telemetry
    from app.documents.cache import open_index
    from app.flows import extraction as pipeline
    from app.jobs.service import create_job
    from app.review.models import Flag
    from evaluation.grading import grade

    model = resolve_model(OFFLINE_MODEL)
    indexes: dict[str, Any] = {}
    answers: list[Answer] = []
    claims = claim_set.claims[:limit] if limit else claim_set.claims
    for claim in claims:
        if claim.document not in indexes:
            indexes[claim.document] = open_index(resolve(claim_set.documents[claim.document]))
        index = indexes[claim.document]
        request = request_of(claim, terse)
        with session_scope() as session:
            job, _ = create_job(session, data=index.path.read_bytes(), filename=index.path.name,
                                parameters=[request.model_dump()], engine=engine, model=model.alias,
                                idempotency_key=f"trust:{engine}:{claim.id}:{time.time_ns()}")
            job_id, parameter_id = job.id, job.parameters[0].id
        outcome = engines.run_parameter(index=index, request=request, model=model, engine=engine,
                                        context=RunContext(job_id=job_id, parameter_id=parameter_id, tenant="bench"))
        cross = pipeline.cross_check(index, request, model,
                                     RunContext(job_id=job_id, parameter_id=parameter_id, tenant="bench"),
                                     outcome.engine)
        telemetry.flush()
        with session_scope() as session:
            extraction, _, _ = pipeline.record_answer(session, job_id, parameter_id, outcome, cross, index)
            flags = [{"rule": f.rule, "severity": f.severity, "message": f.message, "evidence": f.evidence}
                     for f in session.scalars(select(Flag).where(Flag.extraction_id == extraction.id))]
            stored = {"found": extraction.found, "values": extraction.values, "source_page": extraction.source_page,
                      "confidence": extraction.confidence, "quote": extraction.quote}
        verdict = grade(claim, stored)
        answers.append(Answer(claim.id, bool(stored["found"]), verdict.exact if stored["found"] else None, flags,
                              stored["confidence"], {**_claim_detail(claim), "values": stored["values"],
                                                     "quote": stored["quote"], "page": stored["source_page"]}))
    return answers


def gold_answers(claim_set: Any, limit: int | None, terse: bool = False) -> list[Answer]:
    """Every claim's own answer (its numbers, its verbatim source text and page) audited as an answer: all of them
    are right, so every flag is a false alarm. The quotes are written as the claim authors cut them (a cell
    run, a row, a sentence), which stresses the page rules on layouts and quote styles the reader never gives."""
    from app.detectors.audit import audit
    from app.detectors.record import Submission
    from app.documents.cache import open_index

    indexes: dict[str, Any] = {}
    answers: list[Answer] = []
    claims = claim_set.claims[:limit] if limit else claim_set.claims
    for claim in claims:
        value = {"min": claim.min, "typical": claim.typical, "max": claim.max, "unit": claim.unit,
                 "conditions": list(claim.conditions)}
        if not claim.source_text or all(value[f] is None for f in ("min", "typical", "max")):
            continue
        if claim.document not in indexes:
            indexes[claim.document] = open_index(resolve(claim_set.documents[claim.document]))
        submission = Submission(found=True, values=[value], quote=claim.source_text,
                                pages=[claim.page] if claim.page else [], confidence=1.0)
        result = audit(None, submission=submission, index=indexes[claim.document],
                       request=request_of(claim, terse).model_dump())
        flags = [{"rule": f.rule, "severity": f.severity.value, "message": f.message, "evidence": f.evidence}
                 for f in result.findings]
        answers.append(Answer(claim.id, True, True, flags, 1.0,
                              {**_claim_detail(claim), "values": [value], "quote": claim.source_text,
                               "page": claim.page}))
    return answers


# ---------------------------------------------------------------------------------------------------------------
# Real hosted-model cells through ``dsx detect``.


def _cell_record(cell: dict[str, Any], key: str, claim: Any, values: list[dict[str, Any]] | None,
                 terse: bool = False) -> dict[str, Any]:
    """A per-cell record in the ``cell`` trace format, carrying the request the model was given."""
    quote = cell.get("source_text") or cell.get("submitted_source_text")
    return {"claim_id": key, "model": cell.get("model"), "engine": cell.get("engine") or "agentic",
            "n_tool_calls_by_tool": cell.get("n_tool_calls_by_tool") or {}, "found": True,
            "values": values or [], "source_text": quote, "page_numbers": cell.get("page_numbers") or [],
            "confidence": cell.get("confidence"), "request": request_of(claim, terse).model_dump()}


def cell_answers(claim_set: Any, arm: str, terse: bool = False) -> list[Answer]:
    from app.cli.detect import detect_trace
    from evaluation.grading import grade

    path = CELLS / f"cells_{arm}.jsonl"
    cells = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    by_document: dict[str, list[tuple[dict[str, Any], Answer]]] = {}
    answers: list[Answer] = []
    for number, cell in enumerate(cells):
        claim = next((c for c in claim_set.claims if c.id == cell["claim_id"]), None)
        if claim is None:
            continue
        key = f"{cell['claim_id']}#{number}"
        if arm == "clean":
            values = [{"min": v.get("min"), "typical": v.get("typ", v.get("typical")), "max": v.get("max"),
                       "unit": v.get("unit"), "conditions": v.get("conditions") or [],
                       "source_text": v.get("source_text")} for v in cell.get("values") or []]
            # Only the reference run's cells carry the answer and its quote; repeats carry counts only.
            if not values or not (cell.get("source_text") or any(v["source_text"] for v in values)):
                continue
            correct = grade(claim, {"found": True, "values": values}).exact
        else:
            if not cell.get("answered"):
                continue
            values, correct = None, None
        answer = Answer(key, True, correct, confidence=cell.get("confidence"),
                        detail={**_claim_detail(claim), "values": values, "page": cell.get("page_numbers"),
                                "quote": cell.get("source_text") or cell.get("submitted_source_text")})
        answers.append(answer)
        by_document.setdefault(claim.document, []).append((_cell_record(cell, key, claim, values, terse), answer))
    for document, members in by_document.items():
        with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False, encoding="utf-8") as handle:
            for record, _ in members:
                handle.write(json.dumps(record) + "\n")
        result = detect_trace(Path(handle.name), "cell", resolve(claim_set.documents[document]))
        Path(handle.name).unlink()
        by_key = {answer.key: answer for _, answer in members}
        for item in result["flags"]:
            by_key[item["claim_id"]].flags.append({"rule": item["rule"], "severity": item["severity"],
                                                   "message": item["message"], "evidence": item["evidence"]})
    return answers


def print_recall(arm: str, answers: list[Answer]) -> dict[str, Any]:
    caught = [a for a in answers if a.flagged]
    rules = Counter(r for a in caught for r in a.rules)
    print(f"== real-model cells, {arm}: {len(caught)}/{len(answers)} answered cells flagged"
          f"{'' if len(caught) == len(answers) else '  goal missed'}   by rule: {dict(rules)}")
    missed = [a.key for a in answers if not a.flagged]
    if missed:
        print(f"   missed: {', '.join(missed)}")
    return {"answered": len(answers), "flagged": len(caught), "rules": dict(rules), "missed": missed}


def print_dispatch_on_clean(answers: list[Answer]) -> dict[str, Any]:
    from app.detectors.rules import DISPATCH_RULES

    hits = [a for a in answers if a.rules & set(DISPATCH_RULES)]
    print(f"== real-model cells, clean: dispatch-rule flags on {len(hits)}/{len(answers)} cells (goal 0)")
    return {"cells": len(answers), "dispatch_flagged": len(hits)}


# ---------------------------------------------------------------------------------------------------------------


def _isolated_store() -> None:
    scratch = tempfile.mkdtemp(prefix="dsx-bench-trust-")
    for key in [k for k in os.environ if k.startswith("DSX_") and k != "DSX_SHARED_DIR"]:
        del os.environ[key]
    os.environ["DSX_DATA_DIR"] = str(Path(scratch) / "var")
    from app import migrate
    from app.config import reset_settings

    reset_settings()
    migrate.upgrade()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--claims", type=Path, action="append", default=None,
                        help="a claim file (repeatable; default: bench/claims/*.yaml, the dev set and the "
                             "real-model cells' claims)")
    parser.add_argument("--engines", default="agentic,single-pass", help="offline reader engines to run")
    parser.add_argument("--limit", type=int, default=None, help="only the first N claims of each file")
    parser.add_argument("--json", type=Path, default=None,
                        help="also write the figures, and every answer with its flags, as JSON here")
    parser.add_argument("--name-only", action="store_true",
                        help="ask every claim by its name only (no unit, no conditions): the rules on terse requests")
    parser.add_argument("--gold", action="store_true",
                        help="audit every claim's own answer and quote instead of running the reader: every flag is "
                             "a false alarm (open sets only)")
    parser.add_argument("--list", action="store_true",
                        help="list every missed wrong answer and every false alarm with its answer, claim and flags")
    args = parser.parse_args()
    engines = [e for e in args.engines.split(",") if e]
    claim_files = args.claims or default_claim_files()

    _isolated_store()
    from evaluation.claims import load_claims

    started = time.perf_counter()
    out: dict[str, Any] = {"sets": {}, "cells": {}}
    reader_all: list[Answer] = []
    for path in claim_files:
        claim_set = load_claims(path)
        name = path.stem if path.parent.name != "real_model_cells" else "real_model_cells/claims"
        sealed = is_sealed(path)
        if sealed:
            if args.gold:
                print(f"   {name} is sealed: its claims are never audited as answers")
                continue
            print(f"   {name} is sealed: its figures are printed, never which claims were missed or flagged")
        if args.gold:
            table = confusion(gold_answers(claim_set, args.limit, args.name_only))
            print_table(f"{name} · claims' own answers", table)
            if args.list:
                print_listing(table)
            out["sets"][f"{name}:gold"] = table
            print()
            continue
        for engine in engines:
            answers = reader_answers(claim_set, engine, args.limit, args.name_only)
            reader_all.extend(answers)
            table = confusion(answers)
            if sealed:
                table = counts_only(table)
            print_table(f"{name} · offline reader · {engine}", table)
            if args.list and not sealed:
                print_listing(table)
            out["sets"][f"{name}:{engine}"] = table
        if (path.parent / "cells_clean.jsonl").is_file() and path.resolve() == (CELLS / "claims.yaml").resolve():
            clean = cell_answers(claim_set, "clean", args.name_only)
            table = confusion(clean)
            print_table(f"{name} · real models (clean cells with quotes)", table)
            if args.list:
                print_listing(table)
            out["cells"]["clean"] = {**table, **print_dispatch_on_clean(clean)}
            for arm in RECALL_ARMS:
                out["cells"][arm] = print_recall(arm, cell_answers(claim_set, arm, args.name_only))
        print()
    rows = calibration(reader_all)
    if reader_all:
        print_calibration(rows)
    out["calibration"] = rows
    out["seconds"] = round(time.perf_counter() - started, 1)
    print(f"\n{len(reader_all)} reader runs in {out['seconds']:.0f}s")
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
