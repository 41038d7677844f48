"""The claim checker script (``bench/claims/check_claims.py``) loaded as a module for tests."""

from __future__ import annotations

import importlib.util
import sys
from functools import lru_cache
from types import ModuleType

from tests.support.paths import REPO_ROOT

CLAIMS_DIR = REPO_ROOT / "bench" / "claims"


@lru_cache(maxsize=1)
def checker() -> ModuleType:
    if str(CLAIMS_DIR) not in sys.path:
        sys.path.insert(0, str(CLAIMS_DIR))  # the checker imports its sibling mutations module
    spec = importlib.util.spec_from_file_location("check_claims", CLAIMS_DIR / "check_claims.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module
