"""CLI commands of the review domain: ``dsx detect`` audits a trace recorded elsewhere."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer


def detect_trace(trace: Path, fmt: str | None = None, datasheet: Path | None = None) -> dict[str, Any]:
    """Audit every run in ``trace`` (grounding against ``datasheet`` when given) and collect the findings."""
    from app.detectors.audit import audit
    from app.documents.cache import open_index
    from evaluation.traces import load_records

    fmt, records = load_records(trace, fmt)
    index = open_index(datasheet) if datasheet is not None else None
    out: dict[str, Any] = {"format": fmt, "runs": len(records), "flags": [], "grounding": [], "evaluable": [],
                           "attribution": []}
    for record in records:
        result = audit(record, index=index)
        for finding in result.findings:
            item = finding.to_dict()
            item["evidence"] = {**item["evidence"], "claim_id": record.key}
            out["flags"].append({"claim_id": record.key, **item})
        out["grounding"].extend({"claim_id": record.key, **g.to_dict()} for g in result.groundings or [])
        out["evaluable"].extend({"claim_id": record.key, **v.to_dict()} for v in result.verdicts)
        out["attribution"].append({"claim_id": record.key, **_summary(result)})
    return out


def _summary(result: Any) -> dict[str, Any]:
    from app.detectors.attribution import summarize

    return {"calls": [a.to_dict() for a in result.attributions], "summary": summarize(result.attributions)}


def register(app: typer.Typer) -> None:
    """Add this module's commands to ``app``."""

    @app.command()
    def detect(
        trace: Annotated[Path, typer.Option("--trace", help="Trace file: dsx span JSONL, reference step JSONL, "
                                                            "or per-cell JSON/JSONL")],
        fmt: Annotated[str | None, typer.Option("--format", help="dsx | reference | cell (detected if omitted)")]
        = None,
        datasheet: Annotated[Path | None, typer.Option("--datasheet", help="The intended PDF, for grounding")]
        = None,
    ) -> None:
        """Audit a trace made elsewhere with the detector rules; print flags, grounding and evaluability as JSON."""
        from dsx_client.exits import fail

        from app.documents.index import IndexBuildError
        from evaluation.traces import TraceFormatError

        if not trace.is_file():
            fail(f"no such trace file: {trace}")
        if datasheet is not None and not datasheet.is_file():
            fail(f"no such datasheet: {datasheet}")
        try:
            result = detect_trace(trace, fmt, datasheet)
        except TraceFormatError as exc:
            fail(f"cannot read {trace}: {exc}")
        except IndexBuildError as exc:
            fail(f"cannot index {datasheet}: {exc} [{exc.code}]")
        print(json.dumps(result, indent=2, default=str))
