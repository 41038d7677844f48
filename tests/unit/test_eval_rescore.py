"""Re-scoring re-runs the detector rules over archived traces: it reproduces a real run's flags, follows an edited
trace and changed rule settings, grounds only against the intended datasheet, and keeps stored flags where no
trace can be rebuilt."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from app.cli import cli
from app.config import OFFLINE_MODEL, Settings, reset_settings
from app.dispatch import semconv as sc
from app.documents.cache import open_index
from app.flows.review import submission_of
from app.tables.jobs import Extraction
from evaluation.archive import Archive
from evaluation.claims import load_claims
from evaluation.report import score_archive
from evaluation.rescore import FlagSource, redetect, stored_submission
from evaluation.runner import RunConfig, run

CLAIMS = ["speaker_amplifier-supply-voltage", "speaker_amplifier-quiescent-current"]
DECOY = "led.pdf"


def run_archive(out: Path, claims_file: Path, datasheets: Path, *, arms: list[str],
                engines: tuple[str, ...] = ("agentic", "single-pass")) -> Archive:
    config = RunConfig(claims=load_claims(claims_file).select(ids=CLAIMS), datasheets=datasheets,
                       models=[OFFLINE_MODEL], out=out, engines=list(engines), arms=arms, decoy=datasheets / DECOY)
    run(config)
    score_archive(out, charts=False, flags=FlagSource.stored)
    return Archive(out)


def rules_by_cell(report: dict[str, Any]) -> dict[str, list[str]]:
    return {row["id"]: row["flags"] for row in report["cells"]}


def score(archive: Archive, *args: str) -> dict[str, Any]:
    result = CliRunner().invoke(cli, ["eval", "score", str(archive.root), "--no-charts", *args])
    assert result.exit_code == 0, result.output
    return json.loads((archive.root / "report.json").read_text())


def test_rerunning_the_rules_reproduces_a_real_runs_flags(dsx_env: Settings, claims_file: Path,
                                                          datasheets_dir: Path, tmp_path: Path) -> None:
    archive = run_archive(tmp_path / "run", claims_file, datasheets_dir,
                          arms=["clean", "no-navigation", "null-tool", "wrong-content"])
    cells = list(archive.cells())
    stored = {rule for cell in cells for rule in {f["rule"] for f in cell["flags"]}}
    # Each fault arm left its mark, so "reproduces" is not the trivial empty-equals-empty.
    assert {"tool_bypass", "tool_read_failure", "tool_content_mismatch"} <= stored

    for cell in cells:
        # Flags, messages and evidence exactly as the pipeline stored them.
        assert redetect(cell, index=open_index(datasheets_dir / cell["document_file"])) == cell["flags"], cell["id"]

    stored_report = json.loads((archive.root / "report.json").read_text())
    report = score(archive)  # the default: rerun, grounded in the run's datasheets directory
    summary = report["summary"]
    assert summary["flags_source"] == "rerun"
    assert summary["flags_rerun"] == summary["flags_grounded"] == len(cells) and summary["flags_stored"] == 0
    assert summary["flags_datasheets"] == str(datasheets_dir.resolve())
    assert rules_by_cell(report) == rules_by_cell(stored_report)
    assert summary["flags_by_rule"] == stored_report["summary"]["flags_by_rule"]
    assert summary["detectors"] == stored_report["summary"]["detectors"]
    assert {row["flags_source"] for row in report["cells"]} == {"rerun"}


def drop_navigation(cell: dict[str, Any]) -> dict[str, Any]:
    kept = [s for s in cell["trace"] if s["attributes"].get(sc.GEN_AI_TOOL_NAME) not in sc.NAVIGATION_TOOLS]
    assert len(kept) < len(cell["trace"])
    return {**cell, "trace": kept}


def test_an_edited_trace_is_flagged_when_rerun_but_not_from_stored_flags(
        dsx_env: Settings, claims_file: Path, datasheets_dir: Path, tmp_path: Path) -> None:
    archive = run_archive(tmp_path / "run", claims_file, datasheets_dir, arms=["clean"], engines=("agentic",))
    cells = list(archive.cells())
    assert all(not c["flags"] for c in cells) and all(c["extraction"]["found"] for c in cells)
    edited = cells[0]
    archive.write_cell({k: v for k, v in drop_navigation(edited).items() if k != "schema"})

    rerun = score(archive, "--flags", "rerun")
    assert "tool_bypass" in rules_by_cell(rerun)[edited["id"]]
    assert all("tool_bypass" not in rules for cell_id, rules in rules_by_cell(rerun).items()
               if cell_id != edited["id"])
    assert rerun["summary"]["flags_by_rule"]["tool_bypass"] == 1

    stored = score(archive, "--flags", "stored")
    assert "tool_bypass" not in stored["summary"]["flags_by_rule"]
    assert stored["summary"]["flags_source"] == "stored"
    assert stored["summary"]["flags_stored"] == len(cells) and stored["summary"]["flags_rerun"] == 0
    assert {row["flags_source"] for row in stored["cells"]} == {"stored"}
    # Re-scoring never rewrites what the run archived.
    assert archive.read_cell(edited["id"])["flags"] == []


def test_changed_rule_settings_change_the_rescored_flags(dsx_env: Settings, claims_file: Path,
                                                         datasheets_dir: Path, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    archive = run_archive(tmp_path / "run", claims_file, datasheets_dir, arms=["null-tool"], engines=("agentic",))
    cells = list(archive.cells())
    assert all({f["rule"] for f in c["flags"]} == {"tool_read_failure"} for c in cells)

    def to_review(report: dict[str, Any]) -> int:
        return sum(group["needs_review"] for group in report["summary"]["groups"])

    default = score(archive)
    assert default["summary"]["flags_by_rule"] == {"tool_read_failure": len(cells)}
    assert to_review(default) == len(cells)

    # The operator's configuration (DSX_REVIEW_RULES) is what a rerun applies...
    monkeypatch.setenv("DSX_REVIEW_RULES", json.dumps({"tool_read_failure": {"enabled": False}}))
    reset_settings()
    disabled = score(archive)
    assert disabled["summary"]["flags_by_rule"] == {}
    assert disabled["summary"]["rule_overrides"] == {"tool_read_failure": {"enabled": False}}
    markdown = (archive.root / "report.md").read_text()
    assert f"re-run over the archived traces for {len(cells)}/{len(cells)} cells" in markdown
    assert "rule settings overridden: tool_read_failure" in markdown
    assert score(archive, "--flags", "stored")["summary"]["flags_by_rule"] == {"tool_read_failure": len(cells)}
    assert f"as stored when the cells ran ({len(cells)} cells)" in (archive.root / "report.md").read_text()

    # ...unless --rules names a file, which replaces it.
    rules = tmp_path / "rules.yaml"
    rules.write_text("tool_read_failure:\n  severity: info\n")
    demoted = score(archive, "--rules", str(rules))
    assert demoted["summary"]["flags_by_rule"] == {"tool_read_failure": len(cells)}
    assert demoted["summary"]["rule_overrides"] == {"tool_read_failure": {"enabled": True, "severity": "info"}}
    assert to_review(demoted) == 0  # an info flag does not send an answer to review


def test_cells_without_a_rebuildable_trace_keep_their_stored_flags(dsx_env: Settings, claims_file: Path,
                                                                   datasheets_dir: Path, tmp_path: Path) -> None:
    archive = run_archive(tmp_path / "run", claims_file, datasheets_dir, arms=["clean"], engines=("agentic",))
    source = next(archive.cells())
    kept_flag = {"rule": "verification_skipped", "rule_version": "1", "severity": "warning", "message": "m",
                 "evidence": {"span_ids": []}}
    count_only = {k: v for k, v in source.items() if k not in ("schema", "trace", "root_span_id")}
    archive.write_cell({**count_only, "id": source["id"].replace("--r1", "--r2"), "repeat": 2,
                        "n_tool_calls_by_tool": {"search_text": 1}, "flags": [kept_flag]})
    archive.write_cell({**count_only, "id": source["id"].replace("--r1", "--r3"), "repeat": 3, "trace": [],
                        "flags": [kept_flag]})

    report = score(archive)
    summary = report["summary"]
    assert (summary["flags_rerun"], summary["flags_stored"]) == (len(CLAIMS), 2)
    assert summary["flags_by_rule"] == {"verification_skipped": 2}
    sources = {row["id"]: row["flags_source"] for row in report["cells"]}
    assert sources[source["id"]] == "rerun"
    assert sources[source["id"].replace("--r1", "--r2")] == sources[source["id"].replace("--r1", "--r3")] == "stored"


def test_grounding_uses_only_the_intended_datasheet(dsx_env: Settings, claims_file: Path, datasheets_dir: Path,
                                                   tmp_path: Path) -> None:
    archive = run_archive(tmp_path / "run", claims_file, datasheets_dir, arms=["wrong-content"],
                          engines=("agentic",))
    cells = list(archive.cells())
    assert all("tool_content_mismatch" in {f["rule"] for f in c["flags"]} for c in cells)
    intended = datasheets_dir / cells[0]["document_file"]

    # Another PDF under the intended file name is not the document the cell was graded against.
    impostor = tmp_path / "impostor"
    impostor.mkdir()
    (impostor / intended.name).symlink_to(datasheets_dir / DECOY)
    ungrounded = score(archive, "--datasheets", str(impostor))["summary"]
    assert ungrounded["flags_rerun"] == len(cells) and ungrounded["flags_grounded"] == 0
    # The mismatch rule compares tool output with the intended document, so without it the rule cannot run.
    assert "tool_content_mismatch" not in ungrounded["flags_by_rule"]

    # The same bytes under another name are found by their sha256.
    renamed = tmp_path / "renamed"
    renamed.mkdir()
    (renamed / "renamed.pdf").symlink_to(intended)
    grounded = score(archive, "--datasheets", str(renamed))["summary"]
    assert grounded["flags_grounded"] == len(cells)
    assert grounded["flags_by_rule"]["tool_content_mismatch"] == len(cells)


def test_bad_rescore_options_are_typed_errors(dsx_env: Settings, claims_file: Path, datasheets_dir: Path,
                                              tmp_path: Path) -> None:
    archive = run_archive(tmp_path / "run", claims_file, datasheets_dir, arms=["clean"], engines=("agentic",))
    runner = CliRunner()
    base = ["eval", "score", str(archive.root), "--no-charts"]
    missing = runner.invoke(cli, [*base, "--datasheets", str(tmp_path / "nowhere")])
    assert missing.exit_code == 2 and "datasheets_not_found" in missing.output
    broken = tmp_path / "rules.json"
    broken.write_text('{"tool_bypass": {"severity": "loud"}}')
    invalid = runner.invoke(cli, [*base, "--rules", str(broken)])
    assert invalid.exit_code == 2 and "invalid_rule_settings" in invalid.output
    broken.write_text("[1, 2]")
    assert "invalid_rule_settings" in runner.invoke(cli, [*base, "--rules", str(broken)]).output
    assert runner.invoke(cli, [*base, "--flags", "sometimes"]).exit_code == 2


@pytest.mark.parametrize("row", [
    {"found": True, "values": [{"min": 4.0, "typical": None, "max": 12.0, "unit": "V", "conditions": ["x"]}],
     "source_page": 3, "quote": "4 to 12 V", "confidence": 0.8, "reason": None, "error_code": None},
    {"found": False, "values": [], "source_page": None, "quote": None, "confidence": 0.0, "reason": "absent",
     "error_code": None},
    {"found": False, "values": [], "source_page": None, "quote": None, "confidence": None, "reason": "gave up",
     "error_code": None, "no_extraction": True},
    {"found": False, "values": [], "source_page": None, "quote": None, "confidence": None, "reason": "boom",
     "error_code": "provider_error", "no_extraction": True},
])
def test_archived_answers_read_back_as_the_pipeline_stored_them(row: dict[str, Any]) -> None:
    """The answer rebuilt from a cell equals ``submission_of`` on the extraction row the pipeline wrote."""
    fields = {k: v for k, v in row.items() if k != "no_extraction"}
    extraction_row = Extraction(**fields, error_detail=row["reason"] if row.get("no_extraction") else None)
    archived = None if row.get("no_extraction") else {k: v for k, v in fields.items() if k != "error_code"}
    assert stored_submission(archived, row["error_code"], extraction_row.error_detail) == submission_of(
        extraction_row)
