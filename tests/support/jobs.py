"""Jobs run in-process on the embedded store (``dsx_env``), with the model of the test's choosing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from app.config import reset_settings
from app.db import session_scope
from app.documents import store
from app.flows import extraction as extraction_flow
from app.flows.job_view import job_out
from app.jobs import service
from tests.support.scripted_llm import ScriptedLLM


def use_scripted_model(monkeypatch: pytest.MonkeyPatch, llm: ScriptedLLM, directory: Path,
                       alias: str = "scripted") -> str:
    """Make ``alias`` (served by ``llm``) the default model, with no offline cross-check."""
    models_file = directory / "models.yaml"
    models_file.write_text(yaml.safe_dump({"model_list": [llm.models_file_entry(alias)]}))
    monkeypatch.setenv("DSX_MODELS_FILE", str(models_file))
    monkeypatch.setenv("DSX_MODEL", alias)
    monkeypatch.setenv("DSX_CROSS_CHECK_MODEL", "")
    monkeypatch.setenv("DSX_LLM_BACKOFF_S", "0.01")
    monkeypatch.setenv("DSX_LLM_BACKOFF_MAX_S", "0.05")
    reset_settings()
    return alias


def create(pdf: bytes, parameters: list[Any], *, engine: str = "agentic", model: str | None = None) -> str:
    with session_scope() as session:
        job, _ = service.create_job(session, data=pdf, filename="datasheet.pdf", parameters=json.dumps(parameters),
                                    engine=engine, model=model)
        return job.id


def replace_blob(job_id: str, data: bytes) -> None:
    """Put other bytes where the job's stored PDF is: a file that never passed admission (stored by an older
    version, damaged on disk, or admitted under other limits)."""
    with session_scope() as session:
        sha = service.get_job(session, job_id).blob_sha256
    store.blob_path(sha).write_bytes(data)


def result(job_id: str) -> dict[str, Any]:
    with session_scope() as session:
        return json.loads(job_out(session, service.get_job(session, job_id)).model_dump_json())


def run(job_id: str) -> dict[str, Any]:
    extraction_flow.run(job_id)
    return result(job_id)


def flags(parameter_result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f["rule"]: f for f in parameter_result["flags"]}
