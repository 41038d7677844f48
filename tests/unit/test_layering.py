"""The lower layers import without the service around them.

The agent and the document layer run in index-build children, benchmarks and `dsx tool`; importing them must not
pull in the web framework, Prometheus or the jobs tables. Checked in a fresh interpreter, since this test
process has long since imported everything.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.support.paths import REPO_ROOT

FORBIDDEN_ROOTS = ("fastapi", "starlette", "prometheus_client")
FORBIDDEN_APP_PACKAGES = ("app.api", "app.dashboard", "app.flows", "app.jobs", "app.metrics", "app.review",
                          "app.tables")

PROBE = """
import importlib, json, pkgutil, sys

package = importlib.import_module(sys.argv[1])
names = [package.__name__] + [m.name for m in pkgutil.walk_packages(package.__path__, package.__name__ + ".")]
for name in names:
    importlib.import_module(name)
print(json.dumps({"imported": names, "modules": sorted(sys.modules)}))
"""


def imports_of(package: str) -> dict[str, list[str]]:
    done = subprocess.run([sys.executable, "-c", PROBE, package], cwd=REPO_ROOT, capture_output=True, text=True,
                          check=True)
    return json.loads(done.stdout)


def forbidden(modules: list[str]) -> list[str]:
    return [name for name in modules
            if name.split(".")[0] in FORBIDDEN_ROOTS
            or any(name == pkg or name.startswith(pkg + ".") for pkg in FORBIDDEN_APP_PACKAGES)]


@pytest.mark.parametrize("package", ["app.agent", "app.documents", "app.detectors"])
def test_a_lower_layer_imports_without_the_web_framework_prometheus_or_the_jobs_tables(package: str) -> None:
    found = imports_of(package)
    assert len(found["imported"]) > 3, "the probe imported the package's modules"
    assert forbidden(found["modules"]) == []


def test_the_probe_sees_what_the_api_edge_pulls_in() -> None:
    # The same probe on the API edge must find what it forbids elsewhere, or the check above proves nothing.
    found = imports_of("app.api")
    assert {"fastapi", "prometheus_client", "app.tables.jobs"} <= set(forbidden(found["modules"]))
