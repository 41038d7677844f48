"""Re-run the detector rules over archived cells, so a changed rule (threshold, version, configuration) re-scores
an old run without a model call.

Each cell's run is rebuilt from its archived dispatch record (every span with its payload) and audited by
``app.detectors.audit.audit``, the function the pipeline reviews answers with, given exactly what the pipeline gave
it: the request's name/unit/conditions, the stored answer, the cross-check's answer and error, the engine error
and the engine that actually ran. With the intended datasheet at hand (same sha256 as when the cell ran) the
values are grounded too, so document rules and grounding rules run again; without it grounding is skipped.

A cell whose run cannot be rebuilt (a count-only archive, no spans, no agent span) keeps the flags it was
stored with; the report counts how many cells went which way.
"""

from __future__ import annotations

import enum
import json
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from app.detectors.audit import audit
from app.detectors.config import RuleSettings
from app.detectors.record import RunRecord, Submission, records_from_spans
from app.documents.cache import open_index, sha256_file
from app.documents.index import DatasheetIndex, IndexBuildError
from app.errors import InvalidInput

log = logging.getLogger(__name__)


class FlagSource(enum.StrEnum):
    rerun = "rerun"  # run the detector rules again over each cell's archived trace
    stored = "stored"  # keep the flags each cell was archived with


@dataclass
class RescoreCounts:
    rerun: int = 0
    stored: int = 0
    grounded: int = 0

    def to_summary(self, source: FlagSource, settings: RuleSettings, datasheets: Path | None) -> dict[str, Any]:
        return {
            "flags_source": source.value,
            "flags_rerun": self.rerun,
            "flags_stored": self.stored,
            "flags_grounded": self.grounded,
            "flags_datasheets": str(datasheets) if datasheets is not None else None,
            "rule_overrides": describe_settings(settings) if source is FlagSource.rerun else {},
        }


def describe_settings(settings: RuleSettings) -> dict[str, Any]:
    """The rule overrides in force, in the shape ``DSX_REVIEW_RULES`` and ``--rules`` accept."""
    described = {}
    for rule, override in sorted(settings.overrides.items()):
        spec: dict[str, Any] = {"enabled": override.enabled, **override.options}
        if override.severity is not None:
            spec["severity"] = override.severity.value
        described[rule] = spec
    return described


def load_rule_settings(path: Path) -> RuleSettings:
    """Rule settings from a JSON or YAML file holding the object ``DSX_REVIEW_RULES`` takes."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InvalidInput(f"Cannot read rule settings {path}: {exc.strerror}.", code="rules_file_unreadable") from exc
    try:
        raw = json.loads(text) if path.suffix.lower() == ".json" else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise InvalidInput(f"Rule settings {path} are not valid JSON or YAML: {exc}.",
                           code="invalid_rule_settings") from exc
    if raw is not None and not isinstance(raw, Mapping):
        raise InvalidInput(f"Rule settings {path} must be an object keyed by rule name.",
                           code="invalid_rule_settings")
    try:
        return RuleSettings.from_mapping(raw)
    except ValueError as exc:
        raise InvalidInput(f"Rule settings {path}: {exc}.", code="invalid_rule_settings") from exc


def datasheets_dir(explicit: Path | None, manifest: Mapping[str, Any]) -> Path | None:
    """``--datasheets`` when given (it must exist), else the run's datasheets directory if it still exists."""
    if explicit is not None:
        if not explicit.is_dir():
            raise InvalidInput(f"No datasheets directory at {explicit}.", code="datasheets_not_found")
        return explicit
    recorded = manifest.get("datasheets")
    if recorded and Path(recorded).is_dir():
        return Path(recorded)
    return None


class IntendedDatasheets:
    """The PDF each cell was meant to be answered from, looked up in one directory and opened once.

    A cell records the file name and sha256 of its intended datasheet. A file of that name with other bytes is
    a different document, and grounding against it would judge the answer against the wrong text, so the
    directory's PDFs are searched by sha256 instead; when none matches (or it cannot be indexed now) the cell
    is not grounded, which the report's ``flags_grounded`` count shows.
    """

    def __init__(self, root: Path | None):
        self.root = root
        self._digests: dict[Path, str] = {}
        self._indexes: dict[Path, DatasheetIndex | None] = {}

    def index_for(self, cell: Mapping[str, Any]) -> DatasheetIndex | None:
        path = self._find(cell.get("document_file"), cell.get("document_sha256"))
        if path is None:
            return None
        if path not in self._indexes:
            try:
                self._indexes[path] = open_index(path, self._digests.get(path))
            except IndexBuildError as exc:
                log.warning("cannot index %s to ground archived answers: %s [%s]", path, exc,
                            getattr(exc, "code", None))
                self._indexes[path] = None
        return self._indexes[path]

    def _find(self, name: str | None, sha256: str | None) -> Path | None:
        if self.root is None:
            return None
        candidate = self.root / name if name else None
        if candidate is not None and candidate.is_file() and (sha256 is None or self._digest(candidate) == sha256):
            return candidate
        if sha256 is None:
            return None
        return next((pdf for pdf in sorted(self.root.glob("*.pdf")) if self._digest(pdf) == sha256), None)

    def _digest(self, path: Path) -> str:
        if path not in self._digests:
            self._digests[path] = sha256_file(path)
        return self._digests[path]


def rebuild_record(cell: Mapping[str, Any]) -> RunRecord | None:
    """The primary run of a cell from its archived spans (``None`` when the archive has none to rebuild from)."""
    trace = cell.get("trace")
    if not isinstance(trace, list) or not trace:
        return None
    root_span_id = cell.get("root_span_id")
    records = records_from_spans(trace, root_span_id=root_span_id)
    if root_span_id is None:
        records = [r for r in records if r.role == "primary"] or records
    return records[0] if records else None


def stored_submission(extraction: Mapping[str, Any] | None, error_code: str | None,
                      error_detail: str | None = None) -> Submission | None:
    """The answer as the pipeline stored it on the extraction row (``None`` when the engine errored); a run
    that ended without a submission is stored as not found, with the engine's detail as its reason."""
    if error_code:
        return None
    if extraction is None:
        return Submission.from_mapping({"found": False, "values": [], "reason": error_detail})
    return Submission.from_mapping({
        "found": bool(extraction.get("found")), "values": extraction.get("values") or [],
        "quote": extraction.get("quote"), "source_page": extraction.get("source_page"),
        "confidence": extraction.get("confidence"), "reason": extraction.get("reason"),
    })


def audit_cell(cell: Mapping[str, Any], record: RunRecord, *, index: DatasheetIndex | None,
               settings: RuleSettings | None) -> list[dict[str, Any]]:
    """The flags the detector rules raise now on the cell's rebuilt run, given what the pipeline gave them."""
    request = cell.get("request") or {}
    cross = cell.get("cross_check") or None
    cross_error = cross.get("error_code") if cross else None
    result = audit(
        record,
        submission=stored_submission(cell.get("extraction"), cell.get("error_code"), cell.get("error_detail")),
        index=index,
        request={"name": request.get("name"), "unit": request.get("unit"),
                 "conditions": list(request.get("conditions") or [])},
        cross_check=stored_submission(cross.get("extraction"), cross_error) if cross else None,
        cross_check_error=cross_error,
        error_code=cell.get("error_code"),
        error_detail=cell.get("error_detail"),
        engine=cell.get("engine_used") or cell.get("engine"),
        settings=settings,
    )
    return [finding.to_dict() for finding in result.findings]


def redetect(cell: Mapping[str, Any], *, index: DatasheetIndex | None = None,
             settings: RuleSettings | None = None) -> list[dict[str, Any]] | None:
    """The flags the detector rules raise on the cell now, or ``None`` when its run cannot be rebuilt."""
    record = rebuild_record(cell)
    return None if record is None else audit_cell(cell, record, index=index, settings=settings)


def redetect_cells(cells: Iterable[dict[str, Any]], source: FlagSource, *, datasheets: Path | None = None,
                   settings: RuleSettings | None = None) -> tuple[list[dict[str, Any]], RescoreCounts]:
    """Each cell with the flags ``source`` asks for and a ``flags_source`` saying where they came from."""
    counts = RescoreCounts()
    out = []
    documents = IntendedDatasheets(datasheets)
    for cell in cells:
        record = rebuild_record(cell) if source is FlagSource.rerun else None
        if record is None:
            counts.stored += 1
            out.append({**cell, "flags_source": FlagSource.stored.value})
            continue
        index = documents.index_for(cell)
        counts.rerun += 1
        counts.grounded += index is not None
        out.append({**cell, "flags": audit_cell(cell, record, index=index, settings=settings),
                    "flags_source": FlagSource.rerun.value})
    return out, counts
