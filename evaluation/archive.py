"""The evaluation archive: one JSON file per cell, the run's manifest, and the claims it was graded with.

Everything needed to re-grade a run without re-running it lives here, so grading changes never cost another
model call: the request each cell sent, the extraction it got, the full dispatch record (every span with its
stored payload), the detector flags, groundings and attributions, cost and latency.

Layout::

    DIR/manifest.json        run configuration (claims file, datasheets, models, engines, arms, repeats, decoy)
    DIR/claims.yaml          snapshot of the claims the cells were run for
    DIR/cells/<cell>.json    one per (claim, model, engine, arm, repeat)
    DIR/report.json, DIR/report.md, DIR/charts/*.png   written by the report, re-written by `dsx eval score`
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from app.config import Settings
from app.errors import InvalidInput
from evaluation.claims import ClaimSet, dump_claims, load_claims

CELL_SCHEMA = 1
MANIFEST = "manifest.json"
CLAIMS_SNAPSHOT = "claims.yaml"
CELLS_DIR = "cells"


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_") or "x"


def isolated_settings(out: Path, base: Settings) -> Settings:
    """``base`` with an embedded store inside the archive (``OUT/work``), so evaluation jobs never reach the
    service's review queue and the run's dispatch record stays beside its archive."""
    return base.model_copy(update={"data_dir": (out / "work").resolve(), "database_url": None})


def cell_id(claim_id: str, model: str, engine: str, arm: str, repeat: int) -> str:
    """Stable across runs, so an interrupted run resumes where it stopped and archives can be compared."""
    return "--".join([_slug(claim_id), _slug(model), _slug(engine), _slug(arm), f"r{repeat}"])


def _write_json(path: Path, data: Any) -> None:
    """Atomic: a crash mid-write never leaves a truncated cell that a resumed run would trust."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            json.dump(data, stream, ensure_ascii=False, indent=1, default=str)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


class Archive:
    def __init__(self, root: Path):
        self.root = Path(root)

    @property
    def cells_dir(self) -> Path:
        return self.root / CELLS_DIR

    def cell_path(self, cell: str) -> Path:
        return self.cells_dir / f"{cell}.json"

    def has_cell(self, cell: str) -> bool:
        return self.cell_path(cell).is_file()

    def write_cell(self, record: dict[str, Any]) -> Path:
        path = self.cell_path(record["id"])
        _write_json(path, {"schema": CELL_SCHEMA, **record})
        return path

    def read_cell(self, cell: str) -> dict[str, Any]:
        return json.loads(self.cell_path(cell).read_text(encoding="utf-8"))

    def cells(self) -> Iterator[dict[str, Any]]:
        """Every archived cell, in file-name order (stable)."""
        if not self.cells_dir.is_dir():
            return
        for path in sorted(self.cells_dir.glob("*.json")):
            yield json.loads(path.read_text(encoding="utf-8"))

    def write_manifest(self, manifest: dict[str, Any]) -> None:
        _write_json(self.root / MANIFEST, manifest)

    def manifest(self) -> dict[str, Any]:
        path = self.root / MANIFEST
        if not path.is_file():
            raise InvalidInput(f"{self.root} is not an evaluation archive (no {MANIFEST}).", code="not_an_archive")
        return json.loads(path.read_text(encoding="utf-8"))

    def snapshot_claims(self, claims: ClaimSet) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        dump_claims(claims, self.root / CLAIMS_SNAPSHOT)

    def claims(self) -> ClaimSet:
        return load_claims(self.root / CLAIMS_SNAPSHOT)

    def write_json(self, name: str, data: Any) -> Path:
        path = self.root / name
        _write_json(path, data)
        return path
