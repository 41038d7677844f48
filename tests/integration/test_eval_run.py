"""`dsx eval` end to end with the offline reader on two shared datasheets: the production path per cell, an
archive that re-scores to the same verdicts, every fault arm planting its condition, and no gold in any prompt."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml
from sqlalchemy import create_engine, func, select
from typer.testing import CliRunner

from app.cli import cli
from app.config import OFFLINE_MODEL, Settings
from app.dispatch import semconv as sc
from app.tables.jobs import Job
from evaluation.archive import Archive
from evaluation.claims import load_claims, parse_claims
from evaluation.runner import RunConfig, run

DOCUMENTS = ["speaker_amplifier", "fan"]
DECOY = "led.pdf"
ARM_CLAIMS = ["speaker_amplifier-supply-voltage", "speaker_amplifier-quiescent-current"]


def _standalone_number(digits: str) -> re.Pattern[str]:
    """The gold number as a number of its own: not a digit run inside a timestamp, a duration or a hex span id."""
    return re.compile(rf"(?<![\w])(?<!\d\.){digits}(?![\w])")


def _eval_jobs(url: str) -> int:
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            return int(connection.scalar(select(func.count()).select_from(Job).where(Job.tenant == "eval")) or 0)
    finally:
        engine.dispose()


def tool_spans(cell: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for s in cell["trace"] if s["attributes"].get(sc.GEN_AI_OPERATION) == "execute_tool"]


def chat_spans(cell: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for s in cell["trace"] if s["attributes"].get(sc.GEN_AI_OPERATION) == "chat"]


def test_a_clean_run_is_archived_whole_and_rescores_to_the_same_verdicts(
        dsx_env: Settings, claims_file: Path, datasheets_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    args = ["eval", "run", "--claims", str(claims_file), "--datasheets", str(datasheets_dir), "--out", str(out),
            "--model", OFFLINE_MODEL, "--engine", "both", "--repeats", "2"]
    for key in DOCUMENTS:
        args += ["--document", key]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output

    claims = load_claims(claims_file).select(documents=DOCUMENTS)
    cells = list(Archive(out).cells())
    assert len(cells) == len(claims.claims) * 2 * 2
    by_claim = {c.id: c for c in claims.claims}
    for cell in cells:
        claim = by_claim[cell["claim_id"]]
        assert cell["request"] == {"name": claim.parameter, "unit": claim.unit, "conditions": claim.conditions,
                                   "notes": None}
        assert cell["trace"][0]["name"] == sc.SPAN_INVOKE_AGENT and chat_spans(cell)
        assert cell["engine_used"] == cell["engine"] and cell["planted"]["ok"]
        assert cell["error_code"] or cell["extraction"] is not None
    # Agentic cells read the datasheet through tools; single-pass cells got it in the prompt.
    assert all(tool_spans(c) for c in cells if c["engine"] == "agentic")
    assert all({s["attributes"][sc.GEN_AI_TOOL_NAME] for s in tool_spans(c)} == {sc.SUBMIT_TOOL}
               for c in cells if c["engine"] == "single-pass" and not c["error_code"])

    report = json.loads((out / "report.json").read_text())
    assert set(report) == {"summary", "cells"}
    summary = report["summary"]
    assert summary["cells"] == len(cells) and summary["exact_pass"] >= 1
    assert summary["fidelity_pass"] >= summary["exact_pass"] - summary["cells"] // 4
    assert {g["engine"] for g in summary["groups"]} == {"agentic", "single-pass"}
    assert all(s["claims_repeated"] == len(claims.claims) for s in summary["stability"].values())
    assert (out / "report.md").is_file() and (out / "charts" / "verdict_grid.png").is_file()
    # The run kept its own store (jobs, spans, flags); the service's database saw no evaluation job.
    assert _eval_jobs(f"sqlite:///{out / 'work' / 'dsx.db'}") == len(cells)
    assert _eval_jobs(dsx_env.resolved_database_url) == 0

    rescored = CliRunner().invoke(cli, ["eval", "score", str(out), "--no-charts"])
    assert rescored.exit_code == 0, rescored.output
    again = json.loads((out / "report.json").read_text())
    assert again["cells"] == report["cells"]
    assert again["summary"] == summary


def test_every_arm_plants_its_condition(dsx_env: Settings, claims_file: Path, datasheets_dir: Path,
                                        tmp_path: Path) -> None:
    claims = load_claims(claims_file).select(ids=ARM_CLAIMS)
    config = RunConfig(claims=claims, datasheets=datasheets_dir, models=[OFFLINE_MODEL], out=tmp_path / "arms",
                       engines=["agentic", "single-pass"], decoy=datasheets_dir / DECOY,
                       arms=["no-navigation", "no-crosscheck", "null-tool", "closed-book", "wrong-content"])
    result = run(config)
    assert set(result.not_applicable) == {"no-navigation/single-pass", "no-crosscheck/single-pass",
                                          "null-tool/single-pass"}
    cells = {(c["arm"], c["engine"], c["claim_id"]): c for c in Archive(config.out).cells()}
    assert len(cells) == len(ARM_CLAIMS) * 7
    for (arm, engine, _claim), cell in cells.items():
        assert cell["planted"]["ok"], (arm, engine, cell["planted"])
        offered = {name for s in chat_spans(cell) for name in s["payload"]["input"]["tools"]}
        called = {s["attributes"][sc.GEN_AI_TOOL_NAME] for s in tool_spans(cell)}
        flagged = {f["rule"] for f in cell["flags"]}
        answered = bool(cell["extraction"] and cell["extraction"]["found"]) and not cell["error_code"]
        if engine == "single-pass":
            prompt = json.dumps(chat_spans(cell)[0]["payload"]["input"]["messages"])
            assert "<document pages=" in prompt and "LM386" not in prompt
            if arm == "wrong-content":
                assert "7104" in prompt  # the decoy lamp's part number
            continue
        if arm in ("no-navigation", "closed-book"):
            assert offered == called | {sc.SUBMIT_TOOL} == {sc.SUBMIT_TOOL}
            assert not answered or "tool_bypass" in flagged
        elif arm == "no-crosscheck":
            assert not offered & sc.CROSS_CHECK_TOOLS and offered
            assert not answered or {"verification_skipped", "tool_bypass"} & flagged
        elif arm == "null-tool":
            outcomes = {s["attributes"][sc.DSX_TOOL_OUTCOME] for s in tool_spans(cell)
                        if s["attributes"][sc.GEN_AI_TOOL_NAME] in sc.NAVIGATION_TOOLS}
            assert outcomes <= {"empty", "error"} and outcomes
            assert not answered or "tool_read_failure" in flagged
        elif arm == "wrong-content":
            outputs = json.dumps([s["payload"].get("output") for s in tool_spans(cell)])
            assert called & sc.NAVIGATION_TOOLS and "LM386" not in outputs


def test_no_gold_reaches_the_model_through_the_engines(dsx_env: Settings, datasheets_dir: Path,
                                                       tmp_path: Path) -> None:
    words = ["ZQ-QUOTE", "ZQ-NEEDLE", "ZQ-NOTE", "ZQSYMBOL"]
    numbers = ["987654", "13579", "24680", "7777"]
    claims = parse_claims({"version": 1, "documents": {"amp": {"file": "speaker_amplifier.pdf"}}, "claims": [{
        "id": "amp-sentinel", "document": "amp", "parameter": "Operating supply voltage", "symbol": "ZQSYMBOL",
        "kind": "range", "min": -987654.25, "typical": 13579.125, "max": 24680.5, "unit": "V", "conditions": [],
        "page": 7777, "source_text": "ZQ-QUOTE", "needles": ["ZQ-NEEDLE"], "notes": "ZQ-NOTE", "tolerance": 0.5,
    }]}, source="sentinel.yaml")
    config = RunConfig(claims=claims, datasheets=datasheets_dir, models=[OFFLINE_MODEL], out=tmp_path / "leak",
                       engines=["agentic", "single-pass"])
    run(config)
    cells = list(Archive(config.out).cells())
    assert len(cells) == 2
    for cell in cells:
        sent = json.dumps([s["payload"] for s in chat_spans(cell)], ensure_ascii=False)
        assert "Operating supply voltage" in sent
        trace = json.dumps(cell["trace"], ensure_ascii=False)
        for word in words:
            assert word not in trace, (cell["engine"], word)
        for number in numbers:
            assert not _standalone_number(number).search(trace), (cell["engine"], number)
    # The archive keeps the gold beside the cells (for re-scoring), never inside them.
    assert "ZQ-QUOTE" in yaml.safe_dump(Archive(config.out).claims().to_yaml_dict())
