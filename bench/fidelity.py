"""Fidelity of the offline reader on the dev claims, through the production path.

Run from the repository root:  .venv/bin/python bench/fidelity.py [--claims FILE ...] [--engine agentic|single-pass]
[--name-only] [--only SUBSTRING] [--floor 0.5] [--summary-only]

With several ``--claims`` files, each set is measured in turn and a closing table prints one row per set: exact,
wrong and declined as shares of the set's claims, wrong as a share of the answers given, and the median wall
time per parameter with a warm index.

Every claim goes through ``app.agent.engines.run_parameter`` with the model ``offline/datasheet-reader``: the same
loop, LiteLLM transport, tool runner and dispatch record as any hosted model. The request is the claim's
allow-listed projection (parameter name, unit hint, conditions), never its values, page or source text.

Figures printed:

* per claim: exact verdict (min/typical/max equal after unit normalisation, ``±X`` accepted as min -X / max X),
  lenient needle check (on the structured values, and on the quoted evidence), page match, confidence, wall time;
* totals: exact and needle rates (goal: >= 90% exact), declines, wrong answers and the share of them a
  confidence floor would have turned into declines (goal: >= 95%), calibration (accuracy per confidence bin);
* what the wrong answers got wrong (unit, field, a left-out limit, another number) and what the declines' reasons
  say stopped the reader, as counts: a sealed set's weak spots, without showing its claims;
* median wall time per parameter with a warm index (goal <= 100 ms), split into the reader's turns (LLM side of
  the loop) and tool execution; the peer, measured in the same run, is one LiteLLM call to a custom provider
  that answers a fixed tool call at once, i.e. the per-turn floor any model pays.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

SHARED = Path(os.environ.get("DSX_SHARED_DIR", REPO.parent / "shared"))
DATASHEETS = SHARED / "datasheets"
CLAIMS = SHARED / "eval" / "dev_claims.yaml"
BINS = ((0.0, 0.3), (0.3, 0.5), (0.5, 0.7), (0.7, 0.85), (0.85, 1.01))


def _isolated_store() -> None:
    """Spans go to a throwaway embedded database, never to a developer's own data dir."""
    scratch = tempfile.mkdtemp(prefix="dsx-bench-fidelity-")
    for key in [k for k in os.environ if k.startswith("DSX_") and k != "DSX_SHARED_DIR"]:
        del os.environ[key]
    os.environ["DSX_DATA_DIR"] = scratch
    from app import migrate
    from app.config import reset_settings

    reset_settings()
    migrate.upgrade()


def _time_reader() -> list[float]:
    """Wrap the provider's ``respond`` so the bench can tell the reader's own thinking from the loop around it."""
    from app.agent.offline import provider

    spent: list[float] = [0.0]
    inner = provider.respond

    def timed(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            spent[0] += (time.perf_counter() - started) * 1000

    provider.respond = timed
    return spent


def litellm_call_overhead_ms(samples: int = 30) -> float:
    """Median ms of one ``litellm.completion`` to a custom provider that answers a fixed tool call at once:
    the floor every turn of any model pays in this process, measured in the same run as the reader."""
    import litellm
    from litellm import CustomLLM
    from litellm.types.utils import ModelResponse

    class _Echo(CustomLLM):
        def completion(self, *args: Any, **kwargs: Any) -> ModelResponse:
            return ModelResponse(model="bench-echo/fixed", choices=[{
                "index": 0, "finish_reason": "tool_calls",
                "message": {"role": "assistant", "content": None, "tool_calls": [{
                    "id": "call_0", "type": "function", "function": {"name": "search_text", "arguments": "{}"}}]}}],
                usage={"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15})

    if not any(e.get("provider") == "bench-echo" for e in litellm.custom_provider_map):
        litellm.custom_provider_map = [*litellm.custom_provider_map, {"provider": "bench-echo",
                                                                      "custom_handler": _Echo()}]
        litellm.utils.custom_llm_setup()
    tools = [{"type": "function", "function": {"name": "search_text", "parameters": {"type": "object"}}}]
    messages = [{"role": "user", "content": "x"}]
    litellm.completion(model="bench-echo/fixed", messages=messages, tools=tools)
    times = []
    for _ in range(samples):
        started = time.perf_counter()
        litellm.completion(model="bench-echo/fixed", messages=messages, tools=tools)
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def _quote_needles(claim: Any, quote: str | None) -> bool:
    """The README's evidence-span reading of the needle check: every needle is a substring of the quote."""
    if not quote:
        return False
    collapsed = " ".join(quote.split())
    return all(needle in collapsed for needle in claim.needles)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engine", default="agentic", choices=("agentic", "single-pass"))
    parser.add_argument("--only", default=None, help="run only claims whose id contains this text")
    parser.add_argument("--floor", type=float, default=0.5, help="confidence below which an answer counts as "
                        "declinable (default 0.5)")
    parser.add_argument("--claims", type=Path, nargs="+", default=[CLAIMS], help="one or more claim files")
    parser.add_argument("--summary-only", action="store_true", help="print only each set's totals and the table")
    parser.add_argument("--name-only", action="store_true", help="send only the parameter name (no unit hint, no "
                        "conditions): how the reader copes with a terse request")
    args = parser.parse_args()

    _isolated_store()
    from app.agent.engines import run_parameter
    from app.agent.registry import resolve_model
    from app.agent.schemas import RunContext
    from app.documents.cache import open_index
    from evaluation.claims import load_claims, request_for, resolve_document
    from evaluation.grading import grade

    reader_ms = _time_reader()
    model = resolve_model("offline/datasheet-reader")
    indexes: dict[Path, Any] = {}
    summaries: list[tuple[str, list[dict[str, Any]]]] = []
    for path in args.claims:
        claims = load_claims(path)

        def request(claim: Any) -> Any:
            full = request_for(claim)
            return full.model_copy(update={"unit": None, "conditions": []}) if args.name_only else full

        selected = [c for c in claims.claims if not args.only or args.only in c.id]
        if not selected:
            continue
        for claim in selected:
            file = resolve_document(claims.documents[claim.document], DATASHEETS)
            if file not in indexes:
                indexes[file] = open_index(file)

        def index_of(claim: Any, claims: Any = claims) -> Any:
            return indexes[resolve_document(claims.documents[claim.document], DATASHEETS)]

        # Warm-up: imports, unit registry, LiteLLM provider registration (not part of any claim's time).
        run_parameter(index=index_of(selected[0]), request=request(selected[0]), model=model, engine=args.engine,
                      context=RunContext())

        rows: list[dict[str, Any]] = []
        print(f"\n== {path} ({args.engine})")
        if not args.summary_only:
            print(f"{'claim':52s} {'exact':5s} {'ndl':3s} {'quote':5s} {'page':4s} {'conf':>5s} {'ms':>7s}  answer")
        for claim in selected:
            reader_ms[0] = 0.0
            started = time.perf_counter()
            outcome = run_parameter(index=index_of(claim), request=request(claim), model=model,
                                    engine=args.engine, context=RunContext())
            wall_ms = (time.perf_counter() - started) * 1000
            extraction = outcome.extraction.model_dump() if outcome.extraction else None
            verdict = grade(claim, extraction)
            found = bool(extraction and extraction.get("found"))
            confidence = float(extraction.get("confidence", 0.0)) if extraction else 0.0
            quote_ok = _quote_needles(claim, extraction.get("quote") if extraction else None)
            answer = (f"{extraction['values'][0]} p{extraction.get('source_page')}" if found
                      else f"declined: {(extraction or {}).get('reason') or outcome.error_code}")
            rows.append({"id": claim.id, "kind": claim.kind, "found": found, "exact": verdict.exact,
                         "needles": verdict.fidelity, "quote": quote_ok, "page": verdict.page_match,
                         "confidence": confidence, "ms": wall_ms,
                         "error": wrong_answer_kind(claim, extraction, verdict) if found and not verdict.exact
                         else None,
                         "decline": None if found else decline_kind((extraction or {}).get("reason")
                                                                    or outcome.error_code),
                         "llm_ms": float(outcome.extra.get("llm_ms", 0.0)),
                         "tool_ms": float(outcome.extra.get("tool_ms", 0.0)), "turns": outcome.extra.get("turns"),
                         "reader_ms": reader_ms[0]})
            if not args.summary_only:
                mark = lambda ok: "yes" if ok else ("-" if ok is None else "NO")  # noqa: E731
                print(f"{claim.id:52s} {mark(verdict.exact):5s} {mark(verdict.fidelity):3s} {mark(quote_ok):5s} "
                      f"{mark(verdict.page_match):4s} {confidence:5.2f} {wall_ms:7.1f}  {answer[:140]}")
        _print_totals(rows, args.floor, litellm_call_overhead_ms())
        summaries.append((str(path), rows))
    _print_summary(summaries, args.engine)
    return 0


# What a decline's reason says stopped the reader, first match wins (the reasons are the reader's own wording).
DECLINE_KINDS = (
    ("confidence below the floor", "is below"),
    ("no reading names the parameter", "no table row or text line read names"),
    ("closest reading matches too weakly", "too weakly"),
    ("two readings tie", "equally well"),
    ("limits out of order", "out of order"),
    ("no unit printed", "no unit is printed"),
    ("row or columns ambiguous", "names the parameter, but"),
)


def decline_kind(reason: str | None) -> str:
    """The kind of a decline, from its reason: what a set's declines are mostly made of, without showing them."""
    text = reason or ""
    return next((name for name, marker in DECLINE_KINDS if marker in text), "other")


def wrong_answer_kind(claim: Any, extraction: dict[str, Any], verdict: Any) -> str:
    """What a wrong answer got wrong, judged against the claim: its unit, the field its number was put in (the
    claim's number reported as another of min / typical / max), a limit left out, or another number altogether
    (another row, column or sub-row), on the claim's page or another one."""
    from evaluation.units import convert, same_number

    fields = verdict.fields
    if any(v in ("unit_missing", "unit_mismatch") for v in fields.values()):
        return "unit"
    values = extraction.get("values") or [{}]
    value = values[verdict.matched_value or 0]
    wanted = [float(n) for n in claim.stated_fields.values()]
    got = [convert(float(value[f]), value.get("unit"), claim.unit) for f in ("min", "typical", "max")
           if value.get(f) is not None]
    got_numbers = [g for g in got if g is not None]
    if all(v in ("match", "missing") for v in fields.values()):
        missing = "/".join(name for name, state in fields.items() if state == "missing")
        return f"a limit left out ({missing})"
    if got_numbers and all(any(same_number(g, w) for w in wanted) for g in got_numbers):
        return "right number, other field"
    return "other number, same page" if verdict.page_match else "other number, other page"


def _print_summary(summaries: list[tuple[str, list[dict[str, Any]]]], engine: str) -> None:
    """One row per claim set: the figures the goals are stated in."""
    print(f"\nsummary ({engine}): exact, wrong and declined as shares of the claims; wrong/answered as a share of "
          f"the answers given; median ms per parameter with a warm index")
    print(f"{'claim set':60s} {'n':>3s} {'exact':>7s} {'wrong':>7s} {'declined':>8s} {'wrong/answered':>14s} "
          f"{'median ms':>9s}")
    for name, rows in summaries:
        n = len(rows)
        exact = sum(r["exact"] for r in rows)
        answered = [r for r in rows if r["found"]]
        wrong = sum(1 for r in answered if not r["exact"])
        share = f"{wrong / len(answered):.1%}" if answered else "-"
        print(f"{name[-60:]:60s} {n:3d} {exact / n:7.1%} {wrong / n:7.1%} {(n - len(answered)) / n:8.1%} "
              f"{share:>14s} {statistics.median(r['ms'] for r in rows):9.1f}")


def _print_totals(rows: list[dict[str, Any]], floor: float, echo_ms: float) -> None:
    n = len(rows)
    exact = sum(r["exact"] for r in rows)
    needles = sum(r["needles"] for r in rows)
    quotes = sum(r["quote"] for r in rows)
    found = [r for r in rows if r["found"]]
    wrong = [r for r in found if not r["exact"]]
    avoidable = [r for r in wrong if r["confidence"] < floor]
    kept = [r for r in found if r["confidence"] >= floor]
    print()
    print(f"claims {n}: exact {exact}/{n} = {exact / n:.1%} (goal >= 90%)   needles(values) {needles}/{n} = "
          f"{needles / n:.1%}   needles(quote) {quotes}/{n} = {quotes / n:.1%}")
    print(f"answered {len(found)}, declined {n - len(found)}, wrong answers {len(wrong)}")
    if wrong:
        print(f"wrong answers below the confidence floor {floor:.2f}: {len(avoidable)}/{len(wrong)} = "
              f"{len(avoidable) / len(wrong):.1%} avoidable by declining (goal >= 95%)")
    else:
        print("wrong answers: none (100% avoidable)")
    if kept:
        print(f"answers kept at floor {floor:.2f}: {len(kept)}, of which exact {sum(r['exact'] for r in kept)} "
              f"({sum(r['exact'] for r in kept) / len(kept):.1%} precision); exact answers lost to the floor: "
              f"{sum(1 for r in found if r['exact'] and r['confidence'] < floor)}")
    print("calibration (answered claims): confidence bin -> n, exact rate, mean confidence")
    for low, high in BINS:
        members = [r for r in found if low <= r["confidence"] < high]
        if members:
            rate = sum(r["exact"] for r in members) / len(members)
            mean = statistics.mean(r["confidence"] for r in members)
            print(f"  [{low:.2f}, {min(high, 1.0):.2f}): n={len(members):2d}  exact {rate:6.1%}  mean conf {mean:.2f}")
    for kind in sorted({r["kind"] for r in rows}):
        members = [r for r in rows if r["kind"] == kind]
        print(f"  kind {kind:10s}: exact {sum(r['exact'] for r in members)}/{len(members)}")
    for title, key in (("wrong answers by what was wrong", "error"), ("declines by the reader's reason", "decline")):
        counts = Counter(r[key] for r in rows if r[key])
        if counts:
            print(f"{title}: " + ", ".join(f"{name} {count}" for name, count in counts.most_common()))
    wall = [r["ms"] for r in rows]
    reader = [r["llm_ms"] for r in rows]
    tools = [r["tool_ms"] for r in rows]
    print(f"wall time per parameter (warm index): median {statistics.median(wall):.1f} ms, "
          f"p90 {sorted(wall)[int(0.9 * (n - 1))]:.1f} ms (goal median <= 100 ms)")
    print(f"  split: reader turns (model side of the loop) median {statistics.median(reader):.1f} ms, tool execution "
          f"median {statistics.median(tools):.1f} ms, ratio reader/tools "
          f"{statistics.median(reader) / max(statistics.median(tools), 1e-9):.2f}x; turns median "
          f"{statistics.median(r['turns'] or 0 for r in rows):.0f}")
    own = [r["reader_ms"] for r in rows]
    print(f"  peer: one LiteLLM call to a fixed-answer custom provider takes {echo_ms:.1f} ms (median, same run); "
          f"the reader's own reading and deciding takes {statistics.median(own):.1f} ms per parameter (median), "
          f"the rest of the model side is LiteLLM and the loop's recording of each turn")


if __name__ == "__main__":
    raise SystemExit(main())
