"""Claim files: the gold set, reviewer corrections in the same format, documents, and the request chokepoint."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
import yaml

from app.config import Settings
from app.db import session_scope
from app.documents import store
from app.errors import InvalidInput
from app.review import decisions
from app.review.corrections import corrections_yaml
from app.review.decisions import ReviewCorrection, ReviewDecisionRequest
from app.tables.jobs import Job
from evaluation.claims import load_claims, parse_claims, request_for, resolve_document
from evaluation.grading import grade
from tests.support.live import seed_flagged_extraction
from tests.support.pdfs import text_pdf


def test_the_gold_set_loads_and_every_document_resolves(claims_file: Path, datasheets_dir: Path) -> None:
    gold = load_claims(claims_file)
    assert len(gold.claims) == len({c.id for c in gold.claims}) >= 40
    assert set(gold.by_document()) == set(gold.documents)
    for document in gold.documents.values():
        assert resolve_document(document, datasheets_dir).is_file()
    subset = gold.select(documents=["speaker_amplifier"])
    assert subset.claims and {c.document for c in subset.claims} == {"speaker_amplifier"}
    assert set(subset.documents) == {"speaker_amplifier"}
    with pytest.raises(InvalidInput):
        gold.select(ids=["no-such-claim"])


@pytest.mark.parametrize(("change", "message"), [
    (lambda d: d["claims"].append(dict(d["claims"][0])), "duplicate claim id"),
    (lambda d: d["claims"][0].update(document="elsewhere"), "unknown document"),
    (lambda d: [d["claims"][0].pop(k) for k in ("min", "max")], "states none of min, typical, max"),
    (lambda d: d.pop("claims"), "not a claim file"),
])
def test_invalid_claim_files_name_the_problem(change, message: str) -> None:  # noqa: ANN001
    data = {"version": 1, "documents": {"amp": {"file": "amp.pdf"}},
            "claims": [{"id": "amp-vcc", "document": "amp", "parameter": "Supply voltage", "kind": "range",
                        "min": 4, "max": 12, "unit": "V"}]}
    change(data)
    with pytest.raises(InvalidInput, match=message):
        parse_claims(data, source="x.yaml")


def test_the_request_carries_only_the_allow_listed_fields(claims_file: Path) -> None:
    for item in load_claims(claims_file).claims:
        request = request_for(item)
        assert request.model_dump() == {"name": item.parameter, "unit": item.unit,
                                        "conditions": item.conditions, "notes": None}


def test_a_document_is_found_by_sha256_under_another_file_name(tmp_path: Path) -> None:
    pdf = tmp_path / "sheets" / "renamed.pdf"
    pdf.parent.mkdir()
    text_pdf(["Supply voltage 2.7 5.5 V"], pdf)
    digest = hashlib.sha256(pdf.read_bytes()).hexdigest()
    claims = parse_claims({"documents": {"amp": {"file": "Amp Board.pdf", "sha256": digest},
                                         "gone": {"file": "gone.pdf"}},
                           "claims": [{"id": "amp-vdd", "document": "amp", "parameter": "Supply voltage",
                                       "min": 2.7, "max": 5.5, "unit": "V", "kind": "range"}]})
    assert resolve_document(claims.documents["amp"], pdf.parent) == pdf
    with pytest.raises(InvalidInput, match="not found"):
        resolve_document(claims.documents["gone"], pdf.parent)


def test_reviewer_corrections_export_loads_as_claims_and_grades(dsx_env: Settings, tmp_path: Path) -> None:
    with session_scope() as session:
        extraction = seed_flagged_extraction(session, parameter="Supply voltage", filename="Amp Board.pdf",
                                             quote="VDD Supply voltage 3.0 5.25 V")
        correction = ReviewCorrection.model_validate({
            "values": [{"min": 3.0, "max": 5.25, "unit": "V", "conditions": ["TA = 25°C"]},
                       {"typical": 150, "unit": "µA"}],
            "source_page": 4})
        decisions.decide(session, extraction.id, ReviewDecisionRequest(decision="correct", correction=correction),
                         reviewer="ada", tenant=None)
    with session_scope() as session:
        exported = corrections_yaml(session, tenant=None)
    path = tmp_path / "corrections.yaml"
    path.write_text(exported, encoding="utf-8")

    claims = load_claims(path)
    assert len(claims.claims) == 2 and list(claims.documents) == ["amp_board"]
    assert claims.documents["amp_board"].sha256 and claims.documents["amp_board"].file == "Amp Board.pdf"
    ranged = next(c for c in claims.claims if c.kind == "range")
    assert (ranged.min, ranged.max, ranged.unit, ranged.page) == (3.0, 5.25, "V", 4)
    # The corrected answer passes its own claim; the original (2.7 to 5.5 V) does not.
    corrected = {"found": True, "values": [{"min": 3.0, "max": 5.25, "unit": "V", "conditions": ["TA = 25°C"]}]}
    original = {"found": True, "values": [{"min": 2.7, "max": 5.5, "unit": "V"}]}
    assert grade(ranged, corrected).exact and grade(ranged, corrected).fidelity
    assert not grade(ranged, original).exact
    current = next(c for c in claims.claims if c.kind == "typical")
    assert current.unit == "uA" and grade(current, {"found": True, "values": [{"typical": 0.15, "unit": "mA"}]}).exact
    # The quote does not print 150, so that claim was exported without needles: the lenient check then looks
    # for its stated numbers and unit.
    assert "needles" not in next(c for c in yaml.safe_load(exported)["claims"] if c["kind"] == "typical")
    assert grade(current, {"found": True, "values": [{"typical": 150, "unit": "µA"}]}).fidelity
    assert not grade(current, {"found": True, "values": [{"typical": 15, "unit": "µA"}]}).fidelity


def test_a_correction_quote_is_refound_in_the_datasheet_or_flagged(dsx_env: Settings) -> None:
    pdf = text_pdf(["Electrical characteristics", "Supply voltage VDD 3.0 5.25 V\nQuiescent current IQ 150 uA"])
    with session_scope() as session:
        right = seed_flagged_extraction(session, parameter="Supply voltage", quote="Supply voltage VDD 2.7 5.5 V")
        job = session.get(Job, right.job_id)
        wrong = seed_flagged_extraction(session, parameter="Quiescent current", job=job, quote=None)
        blob = store.blob_path(job.blob_sha256)
        blob.parent.mkdir(parents=True, exist_ok=True)
        blob.write_bytes(pdf)
        for extraction, quote, value in (
                (right, "Supply voltage VDD 3.0 5.25 V", {"min": 3.0, "max": 5.25, "unit": "V"}),
                (wrong, "Quiescent current IQ 15 mA typical", {"typical": 15, "unit": "mA"})):
            correction = ReviewCorrection.model_validate({"values": [value], "source_page": 2, "quote": quote})
            decisions.decide(session, extraction.id,
                             ReviewDecisionRequest(decision="correct", correction=correction),
                             reviewer="ada", tenant=None)
    with session_scope() as session:
        exported = yaml.safe_load(corrections_yaml(session, tenant=None, job_id=right.job_id))
    notes = {c["parameter"]: c["notes"] for c in exported["claims"]}
    assert "Quote found on page 2." in notes["Supply voltage"] and "NOT FOUND" not in notes["Supply voltage"]
    assert "QUOTE NOT FOUND in the datasheet" in notes["Quiescent current"]
