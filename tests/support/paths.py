"""Where the shared datasheets and gold claims live (beside the repository, never copied into it)."""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
SHARED_DIR = Path(os.environ.get("DSX_SHARED_DIR", REPO_ROOT.parent / "shared"))
DATASHEETS_DIR = SHARED_DIR / "datasheets"
CLAIMS_FILE = SHARED_DIR / "eval" / "dev_claims.yaml"


def datasheet(name: str) -> Path:
    """Path of a shared datasheet by file name or stem (``"speaker_amplifier"``)."""
    path = DATASHEETS_DIR / (name if name.endswith(".pdf") else f"{name}.pdf")
    if not path.exists():
        raise FileNotFoundError(f"shared datasheet missing: {path}")
    return path
