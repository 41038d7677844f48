"""A fresh pool process warms up before it takes work: what a job's first run would load lazily is loaded by the
warm-up, which records no spans and never stops a process from starting."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from app.dispatch import telemetry
from app.jobs import limits
from tests.support.paths import REPO_ROOT
from workers import warmup

# In a fresh interpreter, as a forked pool child starts: the task module imported (the Celery parent does that before
# the fork), then the warm-up, then one parameter of another datasheet with another unit, as a job would run it.
FIRST_JOB_AFTER_WARM_UP = r"""
import json, sys, tempfile, hashlib
from pathlib import Path
import pymupdf
import workers.tasks
from app.agent import engines
from app.agent.registry import resolve_model
from app.agent.schemas import ParameterRequest, RunContext
from app.config import OFFLINE_MODEL
from app.documents.build import build_index
from workers.warmup import warm_up

imported = set(sys.modules)
warm_up()
warmed = set(sys.modules)

doc = pymupdf.open()
page = doc.new_page(width=595, height=842)
for r, row in enumerate([("Parameter", "Min", "Max", "Unit"), ("Output current", "12", "48", "mA")]):
    for x, cell in zip((50, 200, 250, 300), row):
        page.insert_text((x, 110 + 14 * r), cell, fontsize=9)
data = doc.tobytes()
with tempfile.TemporaryDirectory() as tmp:
    path = Path(tmp) / "other.pdf"
    path.write_bytes(data)
    index = build_index(path, hashlib.sha256(data).hexdigest(), timeout_s=30, max_pages=1)
    engines.run_parameter(index=index, request=ParameterRequest(name="Output current", unit="mA"),
                          model=resolve_model(OFFLINE_MODEL), engine="auto", context=RunContext(tenant="t"))
print(json.dumps({"by_warm_up": sorted(warmed - imported), "by_first_job": sorted(set(sys.modules) - warmed)}))
"""


def test_the_first_job_after_the_warm_up_loads_nothing_the_warm_up_could_have(tmp_path) -> None:  # noqa: ANN001
    env = {k: v for k, v in os.environ.items() if not k.startswith("DSX_")}
    env.update({"DSX_DATA_DIR": str(tmp_path), "LITELLM_LOCAL_MODEL_COST_MAP": "True", "PYTHONPATH": str(REPO_ROOT)})
    completed = subprocess.run([sys.executable, "-c", FIRST_JOB_AFTER_WARM_UP], cwd=REPO_ROOT, env=env,
                               capture_output=True, text=True, timeout=300, check=True)
    modules = json.loads(completed.stdout.strip().splitlines()[-1])
    # The warm-up did load what the task module does not: LiteLLM's provider modules, the offline reader.
    assert any(name.startswith("litellm.") for name in modules["by_warm_up"])
    assert "app.agent.offline" in modules["by_warm_up"]
    # ... and the job after it needed none of those families any more.
    lazy_families = ("litellm", "tiktoken", "app.agent", "app.documents", "app.detectors", "pint")
    assert [name for name in modules["by_first_job"] if name.split(".")[0] in lazy_families
            or name.startswith(lazy_families)] == []


def test_the_warm_up_records_no_spans(dsx_env) -> None:  # noqa: ANN001
    exporter = InMemorySpanExporter()
    recording = TracerProvider()
    recording.add_span_processor(SimpleSpanProcessor(exporter))
    with telemetry.use_provider(recording):
        warmup.warm_up()
        with telemetry.get_tracer().start_as_current_span("a job's span"):
            pass  # the recording provider is the active one again after the warm-up
    assert [span.name for span in exporter.get_finished_spans()] == ["a job's span"]


def test_a_failed_warm_up_does_not_stop_the_process(dsx_env, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    def broken(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("no PDF engine")

    monkeypatch.setattr(warmup, "build_index", broken)
    assert warmup.warm_up() >= 0.0


def test_the_pool_waits_for_a_warming_process() -> None:
    # Celery kills a pool process that has not reported up within this; the warm-up runs before it reports.
    assert limits.worker_config()["worker_proc_alive_timeout"] >= 60
