"""bench/load.py splits a burst's CPU per request by who spent it, so its figures say what they are short of."""

from __future__ import annotations

import importlib.util
from pathlib import Path

LOAD = Path(__file__).resolve().parents[2] / "bench" / "load.py"


def _load():  # noqa: ANN202 - the benchmark module (bench/ is not a package)
    spec = importlib.util.spec_from_file_location("bench_load", LOAD)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_cpu_of_a_burst_is_split_per_request_by_component() -> None:
    load = _load()
    cpu = {
        "cpu_s_by_component": {
            "api": 2.0,
            "workers": 1.0,
            "postgres": 0.5,
            "redis": 0.1,
            "bench_client": 0.9,
            "other_work": 4.0,
        }
    }
    split = load.cpu_split_ms(cpu, 500)
    assert split == {"api": 4.0, "workers": 2.0, "postgres": 1.0, "redis": 0.2, "bench_client": 1.8, "other_work": 8.0}
    line = load.describe_split(split)
    assert line.startswith("API 4.0  workers (running accepted jobs) 2.0  Postgres 1.0  Redis 0.2")
    assert line.endswith("other work on the machine 8.0  (total 17.0)")
    assert load.cpu_split_ms(cpu, 0)["api"] == 2000.0  # no requests: per one, not a division by zero
