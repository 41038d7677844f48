"""Grade an archive and summarise it: ``report.json`` (stable top-level shape), ``report.md`` and charts.

Everything here reads archived cells only, so ``dsx eval score DIR`` reproduces the run's report offline and a
changed grader re-scores old runs without a model call. The detector rules are part of the grading: by default
they run again over each cell's archived trace (``evaluation.rescore``), so a changed rule or rule setting
takes effect; ``flags="stored"`` keeps the flags the cells were archived with.

``report.json`` is ``{"summary": {...}, "cells": [...]}``. The summary always has ``cells``, ``fidelity_pass``,
``exact_pass``, ``engine_errors``, ``flags_by_rule``, ``cost_usd`` and ``latency_s_median``; richer sections
(per-group rates, stability, permutation control, detectors per arm, oracle, where the flags came from:
``flags_source``, ``flags_rerun``, ``flags_stored``, ``flags_grounded``, ``flags_datasheets``,
``rule_overrides``) sit beside them.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from app.detectors.config import RuleSettings, rule_settings
from app.detectors.severity import Severity
from evaluation import arms as arm_registry
from evaluation.archive import Archive
from evaluation.claims import Claim, ClaimSet
from evaluation.grading import grade, permutation_control
from evaluation.markdown import render_markdown
from evaluation.oracle import Oracle, Stated, judge
from evaluation.rescore import FlagSource, datasheets_dir, redetect_cells
from evaluation.stats import claim_group_rate, group_by, rate, stability

GRADING_VERSION = "1"


def _answered(cell: dict[str, Any]) -> bool:
    extraction = cell.get("extraction")
    return not cell.get("error_code") and bool(extraction) and bool(extraction.get("found"))


def _review_rules(cell: dict[str, Any]) -> set[str]:
    """Rules that raised a flag of severity warning or higher (the ones that send an answer to review)."""
    return {f["rule"] for f in cell.get("flags") or [] if _rank(f.get("severity")) >= Severity.warning.rank}


def _rank(severity: str | None) -> int:
    try:
        return Severity(severity or "info").rank
    except ValueError:
        return 0


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def _p90(values: list[float]) -> float | None:
    if not values:
        return None
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=10, method="inclusive")[-1]


def grade_cells(cells: Iterable[dict[str, Any]], claims: ClaimSet, confidence_floor: float | None = None,
                oracle: Oracle | None = None) -> list[dict[str, Any]]:
    """Each archived cell with its ``grade`` (and ``oracle`` verdict when measurements are given)."""
    by_id = {c.id: c for c in claims.claims}
    graded = []
    for cell in cells:
        claim = by_id.get(cell["claim_id"])
        if claim is None:
            continue  # a claim removed from the set since the run: not graded
        verdict = grade(claim, cell.get("extraction"), confidence_floor)
        entry = {**cell, "grade": verdict.to_dict()}
        if cell.get("trace"):
            entry["planted"] = arm_registry.planted_in_cell(cell)
        if oracle is not None:
            entry["oracle"] = _oracle_for_cell(claim, cell, verdict.matched_value, oracle)
        graded.append(entry)
    return graded


def _oracle_for_cell(claim: Claim, cell: dict[str, Any], matched: int | None, oracle: Oracle) -> dict[str, Any] | None:
    """The oracle's verdict on what the cell extracted (the frozen answer, not the gold)."""
    measurement = oracle.measurement_for(claim.id)
    if measurement is None:
        return None
    if not _answered(cell):
        return {"verdict": None, "reason": "no answer to check"}
    values = cell["extraction"].get("values") or []
    value = values[matched if matched is not None else 0]
    stated = Stated(min=value.get("min"), typical=value.get("typical"), max=value.get("max"), unit=value.get("unit"),
                    tolerance=claim.tolerance or 0.0, conditions=list(claim.conditions))
    return judge(stated, measurement).to_dict()


def _gold_oracle(claims: ClaimSet, oracle: Oracle) -> dict[str, Any]:
    verdicts = {}
    for claim in claims.claims:
        measurement = oracle.measurement_for(claim.id)
        if measurement is None:
            continue
        stated = Stated(min=claim.min, typical=claim.typical, max=claim.max, unit=claim.unit,
                        tolerance=claim.tolerance or 0.0, conditions=list(claim.conditions))
        verdicts[claim.id] = judge(stated, measurement).to_dict()
    return verdicts


def _group_summary(cells: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for (model, engine, arm), members in sorted(group_by(cells, lambda c: (c["model"], c["engine"], c["arm"])).items()):
        latencies = [c["latency_s"] for c in members if c.get("latency_s") is not None]
        rows.append({
            "model": model, "engine": engine, "arm": arm, "cells": len(members),
            "claims": len({c["claim_id"] for c in members}),
            "found": sum(bool(c["grade"]["found"]) for c in members),
            "fidelity_pass": sum(bool(c["grade"]["fidelity"]) for c in members),
            "exact_pass": sum(bool(c["grade"]["exact"]) for c in members),
            "engine_errors": sum(bool(c.get("error_code")) for c in members),
            "needs_review": sum(bool(_review_rules(c)) for c in members),
            "planted_ok": sum(bool((c.get("planted") or {}).get("ok")) for c in members),
            "cost_usd": sum(c.get("cost_usd") or 0.0 for c in members),
            "cost_usd_per_cell": (sum(c.get("cost_usd") or 0.0 for c in members) / len(members)),
            "latency_s_median": _median(latencies),
            "latency_s_p90": _p90(latencies),
            "exact_rate_by_claim": claim_group_rate(members, lambda c: bool(c["grade"]["exact"]), all).to_dict(),
        })
    return rows


def _detectors(cells: list[dict[str, Any]]) -> dict[str, Any]:
    """Per (arm, engine): which rules fired, counted per claim with one-sided 95% bounds.

    Only answered cells count (an engine error or an abstention is not a silent failure), and on fault arms only
    those whose fault was verifiably planted. On the clean arm a
    claim counts as flagged by a rule when *any* of its cells was (false-positive rate, upper bound); on a
    fault arm the arm's expected rules *detect* a claim when they flagged *every* answered cell of it (recall,
    lower bound).
    """
    result: dict[str, Any] = {}
    for (arm_name, engine), members in sorted(group_by(cells, lambda c: (c["arm"], c["engine"])).items()):
        arm = arm_registry.ARMS.get(arm_name)
        # A cell whose fault was not actually in force says nothing about the detectors.
        answered = [c for c in members if _answered(c) and (c.get("planted") or {}).get("ok", True)]
        claims = len({c["claim_id"] for c in answered})
        fired = sorted({rule for c in answered for rule in _review_rules(c)})
        rules = {}
        for rule in fired:
            rules[rule] = {
                "cells_flagged": sum(rule in _review_rules(c) for c in answered),
                "claims_any": claim_group_rate(answered, lambda c, r=rule: r in _review_rules(c), any).to_dict(),
                "claims_all": claim_group_rate(answered, lambda c, r=rule: r in _review_rules(c), all).to_dict(),
            }
        entry: dict[str, Any] = {
            "cells": len(members), "answered_cells": len(answered), "answered_claims": claims,
            "planted_ok": sum(bool((c.get("planted") or {}).get("ok")) for c in members),
            "rules": rules,
            "any_flag": claim_group_rate(answered, lambda c: bool(_review_rules(c)), any).to_dict(),
        }
        expected = arm.expected_for(engine) if arm else ()
        if expected:
            wanted = set(expected)
            entry["expected_rules"] = list(expected)
            entry["recall"] = claim_group_rate(answered, lambda c, w=wanted: bool(_review_rules(c) & w), all).to_dict()
            silent = [c for c in answered if c["grade"]["fidelity"] and not (_review_rules(c) & wanted)]
            entry["silent_fidelity_passes"] = len(silent)
            # Which answers were actually wrong, and whether the expected rules caught those in particular.
            wrong = [c for c in answered if not c["grade"]["exact"]]
            entry["wrong_answers"] = len(wrong)
            entry["wrong_answers_flagged"] = sum(bool(_review_rules(c) & wanted) for c in wrong)
            entry["quoted_answers"] = sum(bool((c.get("extraction") or {}).get("quote")) for c in answered)
        else:
            entry["false_positive"] = entry["any_flag"]
        result[f"{arm_name} | {engine}"] = {"arm": arm_name, "engine": engine, **entry}
    return result


def _cell_row(cell: dict[str, Any]) -> dict[str, Any]:
    extraction = cell.get("extraction") or {}
    return {
        "id": cell["id"], "claim_id": cell["claim_id"], "document": cell.get("document"), "model": cell["model"],
        "engine": cell["engine"], "arm": cell["arm"], "repeat": cell["repeat"],
        "found": cell["grade"]["found"], "fidelity": cell["grade"]["fidelity"], "exact": cell["grade"]["exact"],
        "conditions": cell["grade"]["conditions"], "page_match": cell["grade"]["page_match"],
        "below_confidence_floor": cell["grade"]["below_confidence_floor"],
        "values": extraction.get("values") or [], "source_page": extraction.get("source_page"),
        "confidence": extraction.get("confidence"),
        "error_code": cell.get("error_code"),
        "flags": sorted({f["rule"] for f in cell.get("flags") or []}),
        "flags_source": cell.get("flags_source", FlagSource.stored.value),
        "planted_ok": (cell.get("planted") or {}).get("ok"),
        "cost_usd": cell.get("cost_usd"), "latency_s": cell.get("latency_s"),
        **({"oracle": (cell.get("oracle") or {}).get("verdict")} if "oracle" in cell else {}),
    }


def build_report(graded: list[dict[str, Any]], claims: ClaimSet, *, manifest: dict[str, Any] | None = None,
                 confidence_floor: float | None = None, oracle: Oracle | None = None,
                 flag_sources: dict[str, Any] | None = None) -> dict[str, Any]:
    latencies = [c["latency_s"] for c in graded if c.get("latency_s") is not None]
    flags_by_rule = Counter(rule for c in graded for rule in {f["rule"] for f in c.get("flags") or []})
    summary: dict[str, Any] = {
        "cells": len(graded),
        "fidelity_pass": sum(bool(c["grade"]["fidelity"]) for c in graded),
        "exact_pass": sum(bool(c["grade"]["exact"]) for c in graded),
        "engine_errors": sum(bool(c.get("error_code")) for c in graded),
        "flags_by_rule": dict(sorted(flags_by_rule.items())),
        "cost_usd": sum(c.get("cost_usd") or 0.0 for c in graded),
        "latency_s_median": _median(latencies),
        "claims": len({c["claim_id"] for c in graded}),
        "grading_version": GRADING_VERSION,
        "confidence_floor": confidence_floor,
        "run": manifest or {},
        "groups": _group_summary(graded),
        "stability": stability(graded, "exact"),
        "permutation": permutation_control(
            claims.claims, [(c["claim_id"], c.get("extraction")) for c in graded]).to_dict(),
        "detectors": _detectors(graded),
        **(flag_sources or {}),
    }
    if oracle is not None:
        cell_verdicts = Counter(str((c.get("oracle") or {}).get("verdict")) for c in graded if c.get("oracle"))
        summary["oracle"] = {"claims": _gold_oracle(claims, oracle), "cells": dict(sorted(cell_verdicts.items()))}
    summary["exact_rate"] = rate(summary["exact_pass"], len(graded)).to_dict() if graded else None
    return {"summary": summary, "cells": [_cell_row(c) for c in graded]}


def score_archive(root: Path, *, claims: ClaimSet | None = None, confidence_floor: float | None = None,
                  oracle: Oracle | None = None, charts: bool = True, flags: FlagSource = FlagSource.rerun,
                  datasheets: Path | None = None, rules: RuleSettings | None = None) -> dict[str, Any]:
    """Grade every archived cell and (re)write report.json, report.md and the charts.

    With ``flags="rerun"`` the detector rules run again over each cell's trace under ``rules`` (default: the rule
    settings in force), grounding against the intended datasheet found in ``datasheets`` (default: the run's
    datasheets directory, when it still exists). The archived cells themselves are never rewritten.
    """
    from evaluation import charts as chart_module  # matplotlib is imported only when charts are drawn

    archive = Archive(root)
    manifest = archive.manifest()
    claims = claims or archive.claims()
    flags = FlagSource(flags)
    settings = rules or rule_settings()
    documents = datasheets_dir(datasheets, manifest) if flags is FlagSource.rerun else None
    graded = grade_cells(archive.cells(), claims, confidence_floor, oracle)
    graded, counts = redetect_cells(graded, flags, datasheets=documents, settings=settings)
    report = build_report(graded, claims, manifest=manifest, confidence_floor=confidence_floor, oracle=oracle,
                          flag_sources=counts.to_summary(flags, settings, documents))
    archive.write_json("report.json", report)
    chart_files = chart_module.write_charts(root / "charts", report) if charts and graded else []
    (root / "report.md").write_text(render_markdown(report, [p.relative_to(root) for p in chart_files]),
                                    encoding="utf-8")
    return report
