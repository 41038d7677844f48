"""Reports from an archive: the stable report.json shape, counts, detector bounds per claim, re-scoring, charts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from app.cli import cli
from evaluation.archive import Archive, cell_id
from evaluation.claims import load_claims, parse_claims
from evaluation.oracle import FileOracle
from evaluation.report import score_archive
from evaluation.stats import lower_bound, upper_bound

CLAIMS = {
    "version": 1,
    "documents": {"amp": {"file": "amp.pdf", "pages": 3}},
    "claims": [
        {"id": "amp-vcc", "document": "amp", "parameter": "Supply voltage", "kind": "range", "min": 4, "max": 12,
         "unit": "V", "page": 2, "needles": ["4", "12", "V"]},
        {"id": "amp-iq", "document": "amp", "parameter": "Quiescent current", "kind": "max", "typical": 4, "max": 8,
         "unit": "mA", "page": 2, "needles": ["4", "8", "mA"]},
        {"id": "amp-gain", "document": "amp", "parameter": "Voltage gain", "kind": "typical", "typical": 26,
         "unit": "dB", "page": 3, "needles": ["26", "dB"]},
    ],
}
RIGHT = {
    "amp-vcc": {"min": 4, "max": 12, "unit": "V"},
    "amp-iq": {"typical": 4, "max": 8, "unit": "mA"},
    "amp-gain": {"typical": 26, "unit": "dB"},
}


def flag(rule: str, severity: str = "warning") -> dict[str, Any]:
    return {"rule": rule, "rule_version": "1", "severity": severity, "message": rule, "evidence": {"span_ids": []}}


def write_cell(archive: Archive, claim: str, *, arm: str = "clean", repeat: int = 1, value: dict | None = None,
               found: bool = True, error: str | None = None, flags: list[dict] | None = None,
               latency: float = 1.0, cost: float = 0.001, confidence: float = 0.9) -> None:
    extraction = None
    if error is None:
        extraction = ({"found": True, "values": [{**(value or RIGHT[claim]), "conditions": []}], "source_page": 2,
                       "quote": "q", "confidence": confidence, "reason": None} if found
                      else {"found": False, "values": [], "source_page": None, "quote": None, "confidence": 0.0,
                            "reason": "absent"})
    archive.write_cell({
        "id": cell_id(claim, "offline/datasheet-reader", "agentic", arm, repeat), "claim_id": claim,
        "document": "amp", "model": "offline/datasheet-reader", "engine": "agentic", "arm": arm, "repeat": repeat,
        "request": {}, "extraction": extraction, "error_code": error, "error_detail": None, "trace": [],
        "flags": flags or [], "groundings": [], "attributions": [], "planted": {"ok": True},
        "cost_usd": cost, "latency_s": latency,
    })


@pytest.fixture
def archive(tmp_path: Path) -> Archive:
    archive = Archive(tmp_path / "run")
    archive.snapshot_claims(parse_claims(CLAIMS, source="claims.yaml"))
    archive.write_manifest({"schema": 1, "claims_file": "claims.yaml", "models": ["offline/datasheet-reader"],
                            "engines": ["agentic"], "arms": ["clean", "no-navigation"], "repeats": 2})
    # Clean arm, two repeats: everything right except amp-iq in repeat 2 (typical in the max column).
    for repeat in (1, 2):
        write_cell(archive, "amp-vcc", repeat=repeat, latency=1.0 * repeat)
        write_cell(archive, "amp-gain", repeat=repeat, latency=3.0, flags=[flag("grounded_other_page", "info")])
    write_cell(archive, "amp-iq", repeat=1, flags=[flag("verification_skipped")])
    write_cell(archive, "amp-iq", repeat=2, value={"max": 4, "unit": "mA"})
    # Fault arm: two claims answered from memory, both flagged once; one engine error.
    write_cell(archive, "amp-vcc", arm="no-navigation", flags=[flag("tool_bypass", "error")], cost=0.0)
    write_cell(archive, "amp-iq", arm="no-navigation", value={"typical": 4, "max": 8, "unit": "uA"},
               flags=[flag("tool_bypass", "error")], cost=0.0)
    write_cell(archive, "amp-gain", arm="no-navigation", error="submit_not_called", cost=0.0)
    return archive


def test_report_json_has_the_stable_shape_and_counts(archive: Archive) -> None:
    report = score_archive(archive.root)
    assert set(report) == {"summary", "cells"}
    summary = report["summary"]
    assert {"cells", "fidelity_pass", "exact_pass", "engine_errors", "flags_by_rule", "cost_usd",
            "latency_s_median"} <= set(summary)
    assert summary["cells"] == 9 and len(report["cells"]) == 9
    # Exact: 6 clean cells minus amp-iq r2, plus amp-vcc in the fault arm (amp-iq there is in uA, not mA).
    assert summary["exact_pass"] == 6
    # The same cells pass the needles: amp-iq r2 ("4 ma") lacks "8", the uA answer ("4 8 ua") lacks "ma".
    assert summary["fidelity_pass"] == 6
    assert summary["engine_errors"] == 1
    assert summary["flags_by_rule"] == {"grounded_other_page": 2, "tool_bypass": 2, "verification_skipped": 1}
    assert summary["cost_usd"] == pytest.approx(0.006)
    assert summary["latency_s_median"] == pytest.approx(1.0)
    on_disk = json.loads((archive.root / "report.json").read_text())
    assert on_disk["summary"]["exact_pass"] == 6
    markdown = (archive.root / "report.md").read_text()
    assert "## Detectors per arm" in markdown and "charts/verdict_grid.png" in markdown
    for chart in ("verdict_grid.png", "cost_latency.png"):
        assert (archive.root / "charts" / chart).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_detectors_are_bounded_per_claim_group(archive: Archive) -> None:
    detectors = score_archive(archive.root, charts=False)["summary"]["detectors"]
    clean = detectors["clean | agentic"]
    # Info-level flags do not send an answer to review; verification_skipped hit one of three claims.
    assert clean["false_positive"]["k"] == 1 and clean["false_positive"]["n"] == 3
    assert clean["false_positive"]["upper"] == pytest.approx(upper_bound(1, 3))
    assert set(clean["rules"]) == {"verification_skipped"}
    fault = detectors["no-navigation | agentic"]
    assert fault["expected_rules"] == ["tool_bypass"]
    # The engine error is not an answer, so two claims count, both detected.
    assert (fault["recall"]["k"], fault["recall"]["n"]) == (2, 2)
    assert fault["recall"]["lower"] == pytest.approx(lower_bound(2, 2))
    assert fault["silent_fidelity_passes"] == 0
    # amp-iq was answered in the wrong unit and flagged; amp-vcc was right.
    assert (fault["wrong_answers"], fault["wrong_answers_flagged"], fault["quoted_answers"]) == (1, 1, 2)


def test_rescoring_reproduces_the_report_and_follows_grading_changes(archive: Archive, tmp_path: Path) -> None:
    first = score_archive(archive.root, charts=False)
    assert score_archive(archive.root, charts=False) == first
    # A corrected gold value re-grades the archived answers without running anything.
    changed = json.loads(json.dumps(CLAIMS))
    changed["claims"][0]["max"] = 15
    path = tmp_path / "changed.yaml"
    path.write_text(yaml.safe_dump(changed))
    rescored = score_archive(archive.root, claims=load_claims(path), charts=False)
    verdicts = {c["id"]: c["exact"] for c in rescored["cells"]}
    assert rescored["summary"]["exact_pass"] == first["summary"]["exact_pass"] - 3
    assert not any(v for k, v in verdicts.items() if k.startswith("amp-vcc"))


def test_stability_confidence_floor_and_permutation(archive: Archive) -> None:
    summary = score_archive(archive.root, charts=False)["summary"]
    stable = summary["stability"]["offline/datasheet-reader | agentic | clean"]
    assert (stable["claims_repeated"], stable["claims_stable"], stable["unstable_claims"]) == (3, 2, ["amp-iq"])
    assert summary["permutation"]["pairs"] == 8 * 2  # 8 answered cells, each graded for the 2 other claims
    floored = score_archive(archive.root, confidence_floor=0.95, charts=False)["summary"]
    assert floored["exact_pass"] == 0 and floored["confidence_floor"] == 0.95


def test_measurements_add_oracle_verdicts(archive: Archive, tmp_path: Path) -> None:
    path = tmp_path / "m.yaml"
    path.write_text(yaml.safe_dump({"measurements": [
        {"claim": "amp-iq", "value": 7.5, "u": 0.1, "unit": "mA"},
        {"claim": "amp-vcc", "value": 12.5, "u": 0.1, "unit": "V"}]}))
    summary = score_archive(archive.root, oracle=FileOracle.load(path), charts=False)["summary"]
    assert summary["oracle"]["claims"]["amp-iq"]["verdict"] == "pass"
    assert summary["oracle"]["claims"]["amp-vcc"]["verdict"] == "fail"
    # amp-iq r2 extracted max 4 mA, which the 7.5 mA measurement exceeds.
    assert summary["oracle"]["cells"]["fail"] >= 1


def test_score_command_rewrites_the_report(archive: Archive) -> None:
    result = CliRunner().invoke(cli, ["eval", "score", str(archive.root), "--json", "--no-charts"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["cells"] == 9
    missing = CliRunner().invoke(cli, ["eval", "score", str(archive.root / "nope")])
    assert missing.exit_code == 2 and "not an evaluation archive" in missing.output
