"""``report.md``: the report a person reads, rendered from ``report.json`` alone."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}%"


def _num(value: float | None, digits: int = 2) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _bounded(rate: dict[str, Any] | None, side: str) -> str:
    """``k/n (rate, one-sided 95% <side> bound)``."""
    if not rate or not rate.get("n"):
        return "–"
    bound = rate["upper"] if side == "upper" else rate["lower"]
    sign = "≤" if side == "upper" else "≥"
    return f"{rate['k']}/{rate['n']} ({_pct(rate['rate'])}, {sign} {_pct(bound)})"


def _first(items: list[str], count: int) -> str:
    return ", ".join(items[:count]) + (" …" if len(items) > count else "")


def _table(header: list[str], rows: list[list[Any]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(cell).replace("|", "\\|") for cell in row) + " |" for row in rows]
    return lines


def _flag_provenance(summary: dict[str, Any]) -> list[str]:
    """Where the detector flags of this report come from: re-run over the archived traces, or as stored."""
    source = summary.get("flags_source")
    if source is None:
        return []
    n = summary["cells"]
    if source == "stored":
        return ["", f"Detector flags: as stored when the cells ran ({n} cells)."]
    note = (f"Detector flags: re-run over the archived traces for {summary.get('flags_rerun', 0)}/{n} cells "
            f"(stored flags kept for {summary.get('flags_stored', 0)}); grounding and document rules re-run for "
            f"{summary.get('flags_grounded', 0)} cells")
    note += (f" against `{summary['flags_datasheets']}`" if summary.get("flags_datasheets")
             else " (no datasheets directory: pass `--datasheets` to ground the rest)")
    overrides = summary.get("rule_overrides") or {}
    if overrides:
        note += f"; rule settings overridden: {', '.join(sorted(overrides))}"
    return ["", note + "."]


def render_markdown(report: dict[str, Any], charts: list[Path]) -> str:
    summary = report["summary"]
    run = summary.get("run") or {}
    n = summary["cells"]
    lines = [
        "# dsx evaluation report",
        "",
        f"Claims file `{run.get('claims_file')}` ({summary['claims']} claims), "
        f"models {', '.join(run.get('models', []))}, engines {', '.join(run.get('engines', []))}, "
        f"arms {', '.join(run.get('arms', []))}, {run.get('repeats', '?')} repeat(s); "
        f"dsx {run.get('dsx_version', '?')}, grading v{summary['grading_version']}"
        + (f", confidence floor {summary['confidence_floor']}" if summary.get("confidence_floor") is not None else "")
        + ".",
        *_flag_provenance(summary),
        "",
        "## Summary",
        "",
        *_table(["cells", "fidelity (needles)", "exact", "engine errors", "cost (USD)", "median latency (s)"], [[
            n, f"{summary['fidelity_pass']} ({_pct(summary['fidelity_pass'] / n if n else None)})",
            f"{summary['exact_pass']} ({_pct(summary['exact_pass'] / n if n else None)})",
            summary["engine_errors"], _num(summary["cost_usd"], 4), _num(summary["latency_s_median"]),
        ]]),
        "",
        "Fidelity is the lenient needle check (substring tokens over the structured values and unit); exact is the "
        "primary verdict (every stated number equal after unit normalisation).",
        "",
        "## By model, engine and arm",
        "",
        *_table(["model", "engine", "arm", "cells", "found", "fidelity", "exact", "exact claims (all repeats)",
                 "errors", "to review", "planted", "cost/cell (USD)", "latency median / p90 (s)"],
                [[g["model"], g["engine"], g["arm"], g["cells"], g["found"], g["fidelity_pass"], g["exact_pass"],
                  _bounded(g["exact_rate_by_claim"], "lower"), g["engine_errors"], g["needs_review"],
                  f"{g['planted_ok']}/{g['cells']}", _num(g["cost_usd_per_cell"], 5),
                  f"{_num(g['latency_s_median'])} / {_num(g['latency_s_p90'])}"]
                 for g in summary["groups"]]),
        "",
        "## Stability across repeats",
        "",
    ]
    stable_rows = [[s["model"], s["engine"], s["arm"], s["claims_repeated"], s["claims_stable"],
                    _pct(s["stable_share"]), _first(s["unstable_claims"], 8)]
                   for s in summary["stability"].values() if s["claims_repeated"]]
    if stable_rows:
        lines += _table(["model", "engine", "arm", "claims repeated", "same exact verdict every repeat", "share",
                         "unstable"], stable_rows)
    else:
        lines.append("Not measured: every claim ran once (use `--repeats 2` or more).")
    perm = summary["permutation"]
    lines += [
        "",
        "## Permutation control",
        "",
        "Each claim graded against the extractions made for *other* claims: how often a check passes by chance.",
        "",
        *_table(["pairs", "fidelity passes", "exact passes", "same-document pairs", "same-document fidelity",
                 "same-document exact"], [[
                     perm["pairs"], f"{perm['fidelity_passes']} ({_pct(perm['fidelity_rate'])})",
                     f"{perm['exact_passes']} ({_pct(perm['exact_rate'])})", perm["same_document_pairs"],
                     f"{perm['same_document_fidelity_passes']} ({_pct(perm['same_document_fidelity_rate'])})",
                     f"{perm['same_document_exact_passes']} ({_pct(perm['same_document_exact_rate'])})"]]),
        "",
        "## Detectors per arm",
        "",
        "Answered cells whose fault was planted, counted per claim (not per cell) with one-sided 95% "
        "Clopper-Pearson bounds: on clean arms a claim is flagged when any of its cells was (false-positive rate, "
        "upper bound); on fault arms the expected rules detect a claim when they flagged every answered cell of it "
        "(recall, lower bound).",
        "",
    ]
    detector_rows = []
    for entry in summary["detectors"].values():
        if "recall" in entry:
            measure = (f"recall of {', '.join(entry['expected_rules'])}: {_bounded(entry['recall'], 'lower')}; "
                       f"wrong answers flagged {entry['wrong_answers_flagged']}/{entry['wrong_answers']}")
        else:
            measure = f"false positives: {_bounded(entry['false_positive'], 'upper')}"
        fired = ", ".join(f"{rule} ({r['cells_flagged']})" for rule, r in entry["rules"].items()) or "none"
        detector_rows.append([entry["arm"], entry["engine"], entry["answered_cells"], entry["answered_claims"],
                              f"{entry['planted_ok']}/{entry['cells']}", measure, fired])
    lines += _table(["arm", "engine", "answered cells", "answered claims", "planted", "measure",
                     "rules fired (cells)"], detector_rows)
    if "oracle" in summary:
        oracle = summary["oracle"]
        lines += ["", "## Measurement oracle", "",
                  "Verdicts decided only beyond √(u² + t²); inconclusive when within it or when a decisive "
                  "condition was not matched.", ""]
        lines += _table(["claim", "gold verdict", "reason"],
                        [[claim, v["verdict"], v["reason"]] for claim, v in oracle["claims"].items()])
        lines += ["", "Extracted answers: " + (", ".join(f"{k}: {v}" for k, v in oracle["cells"].items()) or "none")]
    if charts:
        lines += ["", "## Charts", ""] + [f"![{path.stem}]({path.as_posix()})" for path in charts]
    failing = [c for c in report["cells"] if not c["exact"] and c["arm"] == "clean"]
    lines += ["", f"## Clean-arm cells without an exact pass ({len(failing)})", ""]
    if failing:
        lines += _table(["cell", "found", "fidelity", "error", "flags"],
                        [[c["id"], c["found"], c["fidelity"], c["error_code"] or "", ", ".join(c["flags"])]
                         for c in failing[:200]])
        if len(failing) > 200:
            lines.append(f"… and {len(failing) - 200} more in report.json.")
    return "\n".join(lines) + "\n"
