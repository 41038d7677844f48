"""Run the evaluation matrix: claims × models × engines × arms × repeats, each cell through the production path.

A cell is one claim answered once. It becomes a real job (stored PDF, job and parameter rows, tenant
``eval``), is answered by ``engines.run_parameter`` (the production loop, spans and dispatch record, with the
arm's phases/tool runner), stored as an extraction row and reviewed by ``review.review_extraction`` (the
production detectors, grounding against the *intended* datasheet). The cell's archive record is then read
back from the database, so it shows exactly what production would have stored.

Cells already in the archive are skipped: re-running the same command resumes an interrupted run without
paying for a cell twice.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import select

from app import __version__
from app.agent import engines
from app.agent.registry import ModelConfig, resolve_model
from app.agent.schemas import ParameterRequest, RunContext
from app.config import get_settings
from app.db import session_scope
from app.detectors.severity import Severity
from app.dispatch import telemetry
from app.dispatch.models import SpanRecord
from app.documents.cache import open_index
from app.documents.index import DatasheetIndex
from app.errors import InvalidInput
from app.flows import extraction as extraction_flow
from app.jobs.service import create_job, transition
from app.review.models import Attribution, Flag, Grounding
from app.tables.jobs import Extraction, Job, JobStatus
from app.timeutil import utcnow
from evaluation import arms as arm_registry
from evaluation.archive import Archive, cell_id
from evaluation.claims import Claim, ClaimSet, request_for, resolve_document

log = logging.getLogger(__name__)

EVAL_TENANT = "eval"
ENGINE_CHOICES = ("agentic", "single-pass", "both")


@dataclass(frozen=True)
class CellSpec:
    claim: Claim
    pdf: Path
    model: str
    engine: str
    arm: str
    repeat: int

    @property
    def id(self) -> str:
        return cell_id(self.claim.id, self.model, self.engine, self.arm, self.repeat)


@dataclass
class RunConfig:
    claims: ClaimSet
    datasheets: Path
    models: list[str]
    out: Path
    engines: list[str] = field(default_factory=lambda: ["agentic", "single-pass"])
    arms: list[str] = field(default_factory=lambda: ["clean"])
    repeats: int = 1
    decoy: Path | None = None


@dataclass
class RunResult:
    ran: list[str] = field(default_factory=list)
    skipped_existing: list[str] = field(default_factory=list)
    not_applicable: list[str] = field(default_factory=list)  # "arm/engine" pairs left out

    @property
    def cells(self) -> int:
        return len(self.ran) + len(self.skipped_existing)


def engines_for(choice: str) -> list[str]:
    if choice not in ENGINE_CHOICES:
        raise InvalidInput(f"Unknown engine {choice!r}; use one of {', '.join(ENGINE_CHOICES)}.",
                           code="unknown_engine")
    return ["agentic", "single-pass"] if choice == "both" else [choice]


def plan(config: RunConfig) -> tuple[list[CellSpec], list[str]]:
    """The cells to run, and the (arm, engine) pairs that do not apply and were left out.

    Everything that can be checked before paying for a call is checked here: models resolve, arms exist,
    a decoy is present when an arm needs one, and every claim's datasheet is found.
    """
    if config.repeats < 1:
        raise InvalidInput("--repeats must be at least 1.", code="invalid_repeats")
    if not config.models:
        raise InvalidInput("Name at least one model.", code="no_models")
    for model in config.models:
        resolve_model(model)
    chosen = [arm_registry.get_arm(name) for name in config.arms]
    if any(arm.needs_decoy for arm in chosen) and (config.decoy is None or not config.decoy.is_file()):
        raise InvalidInput("The wrong-content arm needs --decoy PDF (an existing file).", code="decoy_required")
    pdfs = {key: resolve_document(document, config.datasheets) for key, document in config.claims.documents.items()}
    pairs = [(arm, engine) for arm in chosen for engine in config.engines]
    skipped = [f"{arm.name}/{engine}" for arm, engine in pairs if engine not in arm.engines]
    if len(skipped) == len(pairs):
        raise InvalidInput(f"No arm applies to the engine(s) chosen: {', '.join(skipped)}.",
                           code="arm_not_applicable")
    cells = [
        CellSpec(claim=claim, pdf=pdfs[claim.document], model=model, engine=engine, arm=arm.name, repeat=repeat)
        for repeat in range(1, config.repeats + 1)
        for model in config.models
        for arm, engine in pairs if engine in arm.engines
        for claim in config.claims.claims
    ]
    return cells, skipped


def manifest(config: RunConfig, skipped: list[str]) -> dict[str, Any]:
    decoy = None
    if config.decoy is not None:
        decoy = {"file": config.decoy.name, "path": str(config.decoy.resolve())}
    return {
        "schema": 1,
        "dsx_version": __version__,
        "created_at": utcnow().isoformat(),
        "claims_file": config.claims.source,
        "claims": len(config.claims.claims),
        "datasheets": str(config.datasheets.resolve()),
        "models": list(config.models),
        "engines": list(config.engines),
        "arms": list(config.arms),
        "repeats": config.repeats,
        "decoy": decoy,
        "not_applicable": skipped,
    }


class _Indexes:
    """Each datasheet indexed once per run (``open_index`` also caches across runs by sha256)."""

    def __init__(self) -> None:
        self._by_path: dict[Path, DatasheetIndex] = {}

    def get(self, path: Path) -> DatasheetIndex:
        if path not in self._by_path:
            self._by_path[path] = open_index(path)
        return self._by_path[path]


def run(config: RunConfig, progress: Callable[[CellSpec, dict[str, Any] | None], None] | None = None) -> RunResult:
    """Run every planned cell not yet archived; ``progress`` is called after each cell (record, or None when
    the cell was already in the archive)."""
    cells, skipped = plan(config)
    archive = Archive(config.out)
    archive.snapshot_claims(config.claims)
    archive.write_manifest(manifest(config, skipped))
    indexes = _Indexes()
    decoy = indexes.get(config.decoy) if config.decoy is not None else None
    result = RunResult(not_applicable=skipped)
    for spec in cells:
        if archive.has_cell(spec.id):
            result.skipped_existing.append(spec.id)
            if progress:
                progress(spec, None)
            continue
        record = run_cell(spec, indexes.get(spec.pdf), decoy, scratch=config.out / "work")
        archive.write_cell(record)
        result.ran.append(spec.id)
        if progress:
            progress(spec, record)
    return result


def run_cell(spec: CellSpec, index: DatasheetIndex, decoy: DatasheetIndex | None, scratch: Path) -> dict[str, Any]:
    """Answer one claim once under its arm, review it, and return the cell's archive record."""
    arm = arm_registry.get_arm(spec.arm)
    arm_setup = arm_registry.setup(arm, spec.engine, index, decoy, scratch)
    model = resolve_model(spec.model)
    request = request_for(spec.claim)
    started_at = utcnow()
    job_id, parameter_id = _create_job(spec, request)
    context = RunContext(job_id=job_id, parameter_id=parameter_id, tenant=EVAL_TENANT)

    started = time.perf_counter()
    outcome = engines.run_parameter(index=arm_setup.engine_index, request=request, model=model, engine=spec.engine,
                                    context=context, phases=arm_setup.phases, tool_runner=arm_setup.tool_runner)
    cross = _cross_check(index, request, model, context)
    wall_s = time.perf_counter() - started
    telemetry.flush()

    with session_scope() as session:
        extraction, _, flags = extraction_flow.record_answer(session, job_id, parameter_id, outcome, cross, index)
        job = session.get(Job, job_id)
        needs_review = any(Severity(f.severity).rank >= Severity.warning.rank for f in flags)
        transition(job, JobStatus.needs_review if needs_review else JobStatus.done)
        stored = _stored_review(session, extraction)
        trace = _spans(session, outcome.trace_id)
        cross_trace = _spans(session, cross.trace_id) if cross is not None else []

    record: dict[str, Any] = {
        "id": spec.id,
        "claim_id": spec.claim.id,
        "document": spec.claim.document,
        "document_file": spec.pdf.name,
        "document_sha256": index.sha256,
        "model": spec.model,
        "litellm_model": model.litellm_model,
        "engine": spec.engine,
        "engine_used": outcome.engine,
        "arm": spec.arm,
        "repeat": spec.repeat,
        "job_id": job_id,
        "request": request.model_dump(),
        "extraction": outcome.extraction.model_dump() if outcome.extraction is not None else None,
        "error_code": outcome.error_code,
        "error_detail": outcome.error_detail,
        "trace_id": outcome.trace_id,
        "root_span_id": outcome.root_span_id,
        "trace": trace,
        "cross_check": ({"extraction": cross.extraction.model_dump() if cross.extraction else None,
                         "error_code": cross.error_code, "trace_id": cross.trace_id, "trace": cross_trace}
                        if cross is not None else None),
        **stored,
        "decoy_sha256": decoy.sha256 if arm.needs_decoy and decoy is not None else None,
        "arm_served": arm_setup.tool_runner.served if arm_setup.tool_runner is not None else None,
        "cost_usd": outcome.cost_usd,
        "latency_s": outcome.duration_ms / 1000.0,
        "wall_s": wall_s,
        "engine_extra": {k: v for k, v in outcome.extra.items() if k != "submissions"},
        "started_at": started_at.isoformat(),
        "finished_at": utcnow().isoformat(),
    }
    record["planted"] = arm_registry.planted_in_cell(record)
    return record


def _create_job(spec: CellSpec, request: ParameterRequest) -> tuple[str, int]:
    with session_scope() as session:
        job, _ = create_job(session, data=spec.pdf.read_bytes(), filename=spec.pdf.name,
                            parameters=[request.model_dump()], engine=spec.engine, model=spec.model,
                            tenant=EVAL_TENANT)
        transition(job, JobStatus.running)
        return job.id, job.parameters[0].id


def _cross_check(index: DatasheetIndex, request: ParameterRequest, model: ModelConfig,
                 context: RunContext) -> Any:
    """The production cross-check (the offline reader's second opinion on the intended datasheet), when the
    service would run one for this model."""
    if not extraction_flow.wants_cross_check(model):
        return None
    reader = resolve_model(get_settings().cross_check_model)
    return engines.run_parameter(index=index, request=request, model=reader, engine="agentic",
                                 context=context.model_copy(update={"role": "cross_check"}))


def _stored_review(session: Any, extraction: Extraction) -> dict[str, Any]:
    flags = session.scalars(select(Flag).where(Flag.extraction_id == extraction.id).order_by(Flag.id))
    groundings = session.scalars(select(Grounding).where(Grounding.extraction_id == extraction.id)
                                 .order_by(Grounding.value_index))
    attributions = session.scalars(select(Attribution).where(Attribution.extraction_id == extraction.id)
                                   .order_by(Attribution.id))
    return {
        "flags": [{"rule": f.rule, "rule_version": f.rule_version, "severity": f.severity, "message": f.message,
                   "evidence": f.evidence} for f in flags],
        "groundings": [{"value_index": g.value_index, "outcome": g.outcome, "method": g.method, "score": g.score,
                        "page": g.page, "detail": g.detail} for g in groundings],
        "attributions": [{"span_id": a.span_id, "category": a.category, "charged_to": a.charged_to,
                          "detail": a.detail} for a in attributions],
    }


def _spans(session: Any, trace_id: str | None) -> list[dict[str, Any]]:
    """Every span of a trace as stored (attributes and full payloads), in start order."""
    if not trace_id:
        return []
    rows = session.scalars(select(SpanRecord).where(SpanRecord.trace_id == trace_id)
                           .order_by(SpanRecord.start_ns, SpanRecord.id))
    return [{"trace_id": r.trace_id, "span_id": r.span_id, "parent_span_id": r.parent_span_id, "name": r.name,
             "kind": r.kind, "start_ns": r.start_ns, "end_ns": r.end_ns, "duration_ms": r.duration_ms,
             "status_code": r.status_code, "status_message": r.status_message, "attributes": r.attributes,
             "events": r.events, "payload": r.payload} for r in rows]
