"""``dsx eval``: run the evaluation matrix, re-score an archive offline, sweep the measurement oracle."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Literal

import typer
from dsx_client.exits import err_console, fail
from rich.console import Console
from rich.table import Table

from app.errors import DsxError

eval_app = typer.Typer(name="eval", help="Evaluate models and engines against gold claims.", no_args_is_help=True,
                       add_completion=False)
console = Console()


def _use_isolated_store(out: Path) -> None:
    from app.config import get_settings, use_settings
    from evaluation.archive import isolated_settings

    use_settings(isolated_settings(out, get_settings()))


def _print_summary(report: dict, out: Path) -> None:
    summary = report["summary"]
    table = Table(title=f"evaluation: {out}")
    for column in ("model", "engine", "arm", "cells", "fidelity", "exact", "errors", "to review", "median s"):
        table.add_column(column)
    for group in summary["groups"]:
        median = group["latency_s_median"]
        table.add_row(group["model"], group["engine"], group["arm"], str(group["cells"]), str(group["fidelity_pass"]),
                      str(group["exact_pass"]), str(group["engine_errors"]), str(group["needs_review"]),
                      f"{median:.2f}" if median is not None else "")
    console.print(table)
    console.print(f"{summary['cells']} cells: {summary['fidelity_pass']} fidelity, {summary['exact_pass']} exact, "
                  f"{summary['engine_errors']} engine errors, ${summary['cost_usd']:.4f}; "
                  f"report in {out / 'report.md'}")


@eval_app.command("run")
def run_command(
    claims: Annotated[Path, typer.Option(help="Claim file (dev_claims.yaml format, or exported corrections)")],
    datasheets: Annotated[Path, typer.Option(help="Directory holding the claims' PDFs")],
    out: Annotated[Path, typer.Option(help="Archive directory (created; an existing one is resumed)")],
    model: Annotated[list[str], typer.Option("--model", "-m", help="Model alias (repeatable)")],
    engine: Annotated[str, typer.Option(help="agentic | single-pass | both")] = "both",
    repeats: Annotated[int, typer.Option(min=1, help="Runs of each cell")] = 1,
    arm: Annotated[list[str] | None, typer.Option(
        "--arm", help="clean | no-navigation | no-crosscheck | null-tool | closed-book | wrong-content "
                      "(repeatable)")] = None,
    decoy: Annotated[Path | None, typer.Option(help="Decoy PDF served by the wrong-content arm")] = None,
    claim: Annotated[list[str] | None, typer.Option("--claim", help="Only these claim ids (repeatable)")] = None,
    document: Annotated[list[str] | None, typer.Option("--document", help="Only these document keys")] = None,
    confidence_floor: Annotated[float | None, typer.Option(help="Treat answers below this confidence as "
                                                                 "abstentions when grading")] = None,
    measurements: Annotated[Path | None, typer.Option(help="Measurements file for the oracle")] = None,
    service_db: Annotated[bool, typer.Option("--service-db", help="Record into the configured database instead "
                                                                   "of an embedded one under OUT/work")] = False,
    charts: Annotated[bool, typer.Option(help="Write PNG charts")] = True,
) -> None:
    """Run claims x models x engines x arms x repeats through the production path and write the report."""
    from app import migrate
    from evaluation.claims import load_claims
    from evaluation.oracle import FileOracle
    from evaluation.report import score_archive
    from evaluation.runner import RunConfig, engines_for, plan, run

    try:
        claim_set = load_claims(claims).select(ids=claim, documents=document)
        oracle = FileOracle.load(measurements) if measurements else None
        config = RunConfig(claims=claim_set, datasheets=datasheets, models=list(model), out=out,
                           engines=engines_for(engine), arms=list(arm or ["clean"]), repeats=repeats, decoy=decoy)
        cells, skipped = plan(config)  # validates everything before anything is created
        if not service_db:
            _use_isolated_store(out)
        migrate.upgrade()
        for pair in skipped:
            err_console.print(f"[yellow]skipped:[/] arm/engine {pair} does not apply")
        done = 0

        def progress(spec, record) -> None:  # noqa: ANN001 - typer-free callback
            nonlocal done
            done += 1
            if record is None:
                console.print(f"[dim]{done}/{len(cells)} {spec.id}: already archived[/]")
                return
            status = record["error_code"] or ("found" if (record["extraction"] or {}).get("found") else "not found")
            flags = ", ".join(sorted({f["rule"] for f in record["flags"]}))
            console.print(f"{done}/{len(cells)} {spec.id}: {status} {record['latency_s']:.1f}s"
                          + (f" [yellow]{flags}[/]" if flags else ""))

        run(config, progress=progress)
        report = score_archive(out, confidence_floor=confidence_floor, oracle=oracle, charts=charts)
    except DsxError as exc:
        fail(f"{exc.detail} [{exc.code}]")
    _print_summary(report, out)


@eval_app.command("score")
def score_command(
    archive: Annotated[Path, typer.Argument(help="Archive directory written by `dsx eval run`")],
    claims: Annotated[Path | None, typer.Option(help="Grade against this claim file instead of the archived "
                                                     "snapshot")] = None,
    confidence_floor: Annotated[float | None, typer.Option(help="Confidence below which answers count as "
                                                                 "abstentions")] = None,
    measurements: Annotated[Path | None, typer.Option(help="Measurements file for the oracle")] = None,
    charts: Annotated[bool, typer.Option(help="Write PNG charts")] = True,
    # The values of evaluation.rescore.FlagSource, spelled out so `dsx` starts without importing the rules.
    flags: Annotated[Literal["rerun", "stored"], typer.Option(
        help="rerun: run the detector rules again over each cell's archived trace; stored: keep the archived "
             "flags")] = "rerun",
    datasheets: Annotated[Path | None, typer.Option(help="Directory holding the intended PDFs, to ground "
                                                         "values again (default: the run's, if it still "
                                                         "exists)")] = None,
    rules: Annotated[Path | None, typer.Option(help="Rule settings file (JSON or YAML, as DSX_REVIEW_RULES) "
                                                    "instead of the configured ones")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print report.json's summary")] = False,
) -> None:
    """Re-grade an archive offline (no model call), re-running the detector rules, and rewrite its report."""
    from evaluation.claims import load_claims
    from evaluation.oracle import FileOracle
    from evaluation.report import score_archive
    from evaluation.rescore import FlagSource, load_rule_settings

    try:
        claim_set = load_claims(claims) if claims else None
        oracle = FileOracle.load(measurements) if measurements else None
        rule_settings = load_rule_settings(rules) if rules else None
        report = score_archive(archive, claims=claim_set, confidence_floor=confidence_floor, oracle=oracle,
                               charts=charts, flags=FlagSource(flags), datasheets=datasheets,
                               rules=rule_settings)
    except DsxError as exc:
        fail(f"{exc.detail} [{exc.code}]")
    if as_json:
        print(json.dumps(report["summary"], indent=2, default=str))
        return
    _print_summary(report, archive)


@eval_app.command("perturb")
def perturb_command(
    bound: Annotated[str, typer.Option(help="The stated bound to sweep: min | typical | max")] = "max",
    start: Annotated[float | None, typer.Option(help="First swept value (default: the claim's stated bound)")] = None,
    stop: Annotated[float | None, typer.Option(help="Last swept value")] = None,
    steps: Annotated[int, typer.Option(min=2, help="Grid points (flips are then bisected)")] = 41,
    value: Annotated[float | None, typer.Option(help="Measured value (instead of --measurements)")] = None,
    u: Annotated[float | None, typer.Option(help="Standard uncertainty of the measurement")] = None,
    unit: Annotated[str | None, typer.Option(help="Unit of the measurement and the bounds")] = None,
    tolerance: Annotated[float, typer.Option(help="Tolerance t of the stated value")] = 0.0,
    stated_min: Annotated[float | None, typer.Option("--min", help="Other stated lower limit")] = None,
    stated_max: Annotated[float | None, typer.Option("--max", help="Other stated upper limit")] = None,
    claims: Annotated[Path | None, typer.Option(help="Claim file (with --claim and --measurements)")] = None,
    claim: Annotated[str | None, typer.Option(help="Claim id whose stated limits and measurement are used")] = None,
    measurements: Annotated[Path | None, typer.Option(help="Measurements file")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the sweep as JSON")] = False,
) -> None:
    """Sweep a stated bound through a fixed measurement and report where the oracle's verdict flips."""
    from evaluation.claims import load_claims
    from evaluation.oracle import FileOracle, Measurement, Stated, perturb

    try:
        if claim:
            if not (claims and measurements):
                fail("--claim needs --claims and --measurements.")
            target = load_claims(claims).claim(claim)
            measurement = FileOracle.load(measurements).measurement_for(claim)
            if measurement is None:
                fail(f"no measurement for claim {claim!r} in {measurements}")
            stated = Stated(min=target.min, typical=target.typical, max=target.max, unit=target.unit,
                            tolerance=target.tolerance or 0.0, conditions=list(target.conditions))
        else:
            if value is None or u is None:
                fail("give --value and --u (or --claim with --claims and --measurements).")
            measurement = Measurement(claim="(inline)", value=value, u=u, unit=unit, tolerance=tolerance)
            stated = Stated(min=stated_min, max=stated_max, unit=unit, tolerance=tolerance)
        start = start if start is not None else getattr(stated, bound, None)
        if start is None or stop is None:
            fail("give --start and --stop (--start defaults to the claim's stated bound when it has one).")
        sweep = perturb(stated, measurement, bound, start, stop, steps)
    except KeyError as exc:
        fail(f"unknown claim {exc}")
    except DsxError as exc:
        fail(f"{exc.detail} [{exc.code}]")
    if as_json:
        print(json.dumps({"measurement": measurement.model_dump(), **sweep.to_dict()}, indent=2))
        return
    unit_text = f" {measurement.unit or stated.unit or ''}".rstrip()
    console.print(f"measurement {measurement.value:g} ± {measurement.u:g}{unit_text}; sweeping {bound} "
                  f"from {start:g} to {stop:g} in {steps} steps")
    table = Table()
    table.add_column(bound)
    table.add_column("verdict")
    previous = None
    for point, verdict in sweep.points:
        if verdict != previous:
            table.add_row(f"{point:.6g}", verdict)
            previous = verdict
    console.print(table)
    if not sweep.flips:
        console.print("no flip in the swept range")
    for flip in sweep.flips:
        console.print(f"flip {flip.before} → {flip.after} at {bound} ≈ {flip.at:.6g}{unit_text}")


def register(app: typer.Typer) -> None:
    """Add ``dsx eval`` to the main app."""
    app.add_typer(eval_app, name="eval")
