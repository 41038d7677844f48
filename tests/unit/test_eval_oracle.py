"""The measurement oracle: verdicts only beyond √(u² + t²), decisive conditions, and the perturbation sweep."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from app.cli import cli
from app.errors import InvalidInput
from evaluation.oracle import FileOracle, Measurement, Stated, Verdict, judge, perturb

BAROMETER = Measurement(claim="baro", value=945.285, u=0.080, unit="hPa")


def test_limits_pass_and_fail_only_beyond_the_combined_uncertainty() -> None:
    assert judge(Stated(min=300, max=1100, unit="hPa"), BAROMETER).verdict is Verdict.passed
    assert judge(Stated(max=945.30, unit="hPa"), BAROMETER).verdict is Verdict.inconclusive
    assert judge(Stated(max=945.10, unit="hPa"), BAROMETER).verdict is Verdict.failed
    assert judge(Stated(min=945.50, unit="hPa"), BAROMETER).verdict is Verdict.failed
    # The claim's tolerance widens the band: √(0.08² + 0.2²) ≈ 0.215 covers a 0.185 excess.
    widened = judge(Stated(max=945.10, unit="hPa", tolerance=0.2), BAROMETER)
    assert widened.verdict is Verdict.inconclusive
    assert widened.combined_uncertainty == pytest.approx(math.hypot(0.08, 0.2))


def test_a_typical_value_can_fail_but_never_pass() -> None:
    assert judge(Stated(typical=945.3, unit="hPa"), BAROMETER).verdict is Verdict.inconclusive
    assert judge(Stated(typical=950, unit="hPa"), BAROMETER).verdict is Verdict.failed


def test_units_are_converted_and_incomparable_units_are_inconclusive() -> None:
    assert judge(Stated(min=30, max=110, unit="kPa"), BAROMETER).verdict is Verdict.passed
    assert judge(Stated(max=94.5, unit="kPa"), BAROMETER).verdict is Verdict.failed
    assert judge(Stated(max=5, unit="V"), BAROMETER).verdict is Verdict.inconclusive


def test_an_unmatched_decisive_condition_makes_any_verdict_inconclusive() -> None:
    stated = Stated(max=945.10, unit="hPa", conditions=["TA = 25 °C", "VDD = 3.3 V"])
    unmatched = judge(stated, BAROMETER.model_copy(update={"matched_conditions": ["ta=25°C"]}))
    assert unmatched.verdict is Verdict.inconclusive and unmatched.unmatched_conditions == ["VDD = 3.3 V"]
    matched = BAROMETER.model_copy(update={"matched_conditions": ["TA = 25°C", "VDD=3.3V"]})
    assert judge(stated, matched).verdict is Verdict.failed
    # The measurement may declare which conditions are decisive for it.
    decisive = BAROMETER.model_copy(update={"decisive_conditions": ["TA = 25 °C"], "matched_conditions": ["TA=25°C"]})
    assert judge(stated, decisive).verdict is Verdict.failed


def test_sweeping_a_shrinking_bound_finds_both_flips() -> None:
    sweep = perturb(Stated(min=300, max=1100, unit="hPa"), BAROMETER, "max", 1100, 900, steps=21)
    assert sweep.points[0] == (1100, "pass") and sweep.points[-1][1] == "fail"
    assert [(f.before, f.after) for f in sweep.flips] == [("pass", "inconclusive"), ("inconclusive", "fail")]
    assert sweep.flips[0].at == pytest.approx(945.285 + 0.080, abs=1e-6)
    assert sweep.flips[1].at == pytest.approx(945.285 - 0.080, abs=1e-6)
    with pytest.raises(InvalidInput):
        perturb(Stated(max=1), BAROMETER, "median", 1, 2)


def test_measurements_file_loads_and_rejects_duplicates(tmp_path: Path) -> None:
    path = tmp_path / "measurements.yaml"
    path.write_text(yaml.safe_dump({"version": 1, "measurements": [
        {"claim": "baro-range", "value": 945.285, "u": 0.08, "unit": "hPa", "matched_conditions": []}]}))
    oracle = FileOracle.load(path)
    assert oracle.measurement_for("baro-range").value == 945.285 and oracle.measurement_for("other") is None
    path.write_text(yaml.safe_dump({"measurements": [{"claim": "a", "value": 1, "u": 0.1}] * 2}))
    with pytest.raises(InvalidInput):
        FileOracle.load(path)
    path.write_text(yaml.safe_dump({"measurements": [{"claim": "a", "value": 1, "u": -1}]}))
    with pytest.raises(InvalidInput):
        FileOracle.load(path)


def test_perturb_command_reports_the_flips(tmp_path: Path) -> None:
    claims = tmp_path / "claims.yaml"
    claims.write_text(yaml.safe_dump({"version": 1, "documents": {"baro": {"file": "baro.pdf"}}, "claims": [
        {"id": "baro-range", "document": "baro", "parameter": "Operating pressure", "kind": "range",
         "min": 300, "max": 1100, "unit": "hPa", "conditions": []}]}))
    measurements = tmp_path / "m.yaml"
    measurements.write_text(yaml.safe_dump({"measurements": [
        {"claim": "baro-range", "value": 945.285, "u": 0.08, "unit": "hPa"}]}))
    result = CliRunner().invoke(cli, ["eval", "perturb", "--claims", str(claims), "--measurements", str(measurements),
                                      "--claim", "baro-range", "--bound", "max", "--stop", "900", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["points"][0] == {"bound": 1100.0, "verdict": "pass"}
    assert [round(f["at"], 3) for f in data["flips"]] == [945.365, 945.205]
    inline = CliRunner().invoke(cli, ["eval", "perturb", "--value", "945.285", "--u", "0.08", "--unit", "hPa",
                                      "--start", "1100", "--stop", "900"])
    assert inline.exit_code == 0 and "945.365" in inline.output and "945.205" in inline.output
    missing = CliRunner().invoke(cli, ["eval", "perturb", "--start", "1", "--stop", "2"])
    assert missing.exit_code == 2
