"""`dsx extract`'s in-process run: the index is built in a child while the process loads the pipeline, and the
pipeline then reads it from the cache instead of parsing the PDF itself."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.documents import build, cache
from app.flows.local import extract_local
from tests.support.live import spec_sheet


def test_the_index_comes_from_the_child_built_ahead(tmp_path: Path, dsx_env, monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.setenv("DSX_INDEX_SANDBOX", "false")  # as `dsx extract` runs its pipeline
    from app.config import reset_settings

    reset_settings()
    pdf = tmp_path / "spec.pdf"
    pdf.write_bytes(spec_sheet("ahead"))

    def no_build_here(*_args, **_kwargs) -> None:  # noqa: ANN002, ANN003
        raise AssertionError("the PDF was parsed in the extracting process")

    monkeypatch.setattr(build, "build_index", no_build_here)
    result = extract_local(pdf, ["Supply voltage"])

    assert result["status"] in ("done", "needs_review"), result
    assert result["results"][0]["found"], result["results"][0]
    assert cache.disk_path(cache.sha256_file(pdf)).is_file()


def test_a_pdf_the_child_cannot_index_fails_the_job_with_its_cause(tmp_path: Path, dsx_env,  # noqa: ANN001
                                                                    monkeypatch) -> None:  # noqa: ANN001
    from app.errors import DsxError

    pdf = tmp_path / "broken.pdf"
    pdf.write_bytes(b"%PDF-1.4\n" + b"\x00garbage" * 200)
    with pytest.raises(DsxError) as raised:
        extract_local(pdf, ["Supply voltage"])
    assert raised.value.code == "corrupt_pdf"
