"""One rule for a test whose prerequisite (a service, a binary, the shared datasheets) is missing.

On a developer machine the test is skipped with the reason. Where the run must be complete (``CI=true`` or
``DSX_TEST_REQUIRE_SERVICES=1``, which ``.ci/run`` exports), a missing prerequisite fails the test: a skipped
check there would let the run look green while proving nothing.
"""

from __future__ import annotations

import os
from typing import NoReturn

import pytest


def prerequisites_required() -> bool:
    return os.environ.get("CI") == "true" or bool(os.environ.get("DSX_TEST_REQUIRE_SERVICES"))


def missing_prerequisite(message: str) -> NoReturn:
    """Skip (developer machine) or fail (CI) a test that cannot run because ``message``."""
    if prerequisites_required():
        pytest.fail(f"required for this test but missing: {message}")
    pytest.skip(message)
