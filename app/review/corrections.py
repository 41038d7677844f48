"""Reviewer corrections exported as gold claims, in the evaluation set's format, so reviewed production answers
can extend the gold set."""

from __future__ import annotations

import re
from typing import Any

import yaml
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.contracts import CorrectedValue
from app.documents.models import Blob
from app.review.decisions import ReviewCorrection
from app.review.models import Decision
from app.review.quote_check import QuoteChecker
from app.tables.jobs import Extraction, Job, JobParameter
from app.units import claim_spelling as ascii_unit

_ABSOLUTE_MAX = re.compile(r"\babs(olute)?\.?\s*max", re.IGNORECASE)
_SOURCE_TEXT_CHARS = 200
_NUMBER_TOKEN = re.compile(r"(?<![\w.,])[-+]?(?:\d+(?:[.,]\d+)?|[.,]\d+)(?![\d])")


def corrections_as_claims(session: Session, *, tenant: str | None, job_id: str | None = None) -> dict[str, Any]:
    """Corrected extractions as claims in the evaluation set's format (``version``, ``documents``, ``claims``),
    one claim per corrected value, so reviewed production answers can extend the gold set.

    Only an extraction whose latest decision is ``correct`` contributes: a later approve or reject withdraws it.
    """
    query = (
        select(Decision, Extraction, JobParameter, Job, Blob)
        .join(Extraction, Extraction.id == Decision.extraction_id)
        .join(JobParameter, JobParameter.id == Extraction.parameter_id)
        .join(Job, Job.id == Decision.job_id)
        .join(Blob, Blob.sha256 == Job.blob_sha256)
        .order_by(Decision.id)
    )
    if tenant is not None:
        query = query.where(Decision.tenant == tenant)
    if job_id:
        query = query.where(Decision.job_id == job_id)
    latest: dict[int, tuple[Decision, Extraction, JobParameter, Job, Blob]] = {}
    for row in session.execute(query):
        latest[row[0].extraction_id] = tuple(row)  # type: ignore[assignment]

    documents: dict[str, dict[str, Any]] = {}
    keys_by_sha: dict[str, str] = {}
    claims: list[dict[str, Any]] = []
    used_ids: set[str] = set()
    checker = QuoteChecker()
    for decision, extraction, parameter, job, blob in latest.values():
        if decision.decision != "correct" or not decision.correction:
            continue
        correction = ReviewCorrection.model_validate(decision.correction)
        doc_key = _document_key(job.filename, blob.sha256, keys_by_sha)
        documents.setdefault(doc_key, {"file": job.filename, "pages": blob.page_count, "title": job.filename,
                                       "sha256": blob.sha256})
        page = correction.source_page or extraction.source_page
        quote = correction.quote or extraction.quote or ""
        source_text = _collapse(quote)[:_SOURCE_TEXT_CHARS]
        for value in correction.values:
            claim_id = _unique(f"{doc_key}-{_slug(parameter.name)}", used_ids)
            claim: dict[str, Any] = {"id": claim_id, "document": doc_key, "parameter": parameter.name,
                                     "kind": _kind(value, parameter)}
            for field in ("min", "typical", "max"):
                number = getattr(value, field)
                if number is not None:
                    claim[field] = number
            if value.unit:
                claim["unit"] = ascii_unit(value.unit)
            claim["conditions"] = list(value.conditions)
            if page is not None:
                claim["page"] = page
            if source_text:
                claim["source_text"] = source_text
                needles = _needles(value, source_text)
                if needles:
                    claim["needles"] = needles
            note = f"Reviewer correction by {decision.reviewer} on {decision.created_at:%Y-%m-%d} " \
                   f"(job {job.id}, extraction {extraction.id})."
            if quote.strip():
                # Said in the notes: the claim keeps exactly the evaluation set's keys.
                note += " " + _quote_note(checker.check(blob.sha256, value.model_dump(), quote, page))
            claim["notes"] = f"{note} {decision.comment}" if decision.comment else note
            claims.append(claim)
    return {"version": 1, "documents": documents, "claims": claims}


def corrections_yaml(session: Session, *, tenant: str | None, job_id: str | None = None) -> str:
    data = corrections_as_claims(session, tenant=tenant, job_id=job_id)
    header = "# Reviewer corrections exported as gold claims (schema of the evaluation set's dev_claims.yaml).\n"
    return header + yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=120)



def _quote_note(check: dict[str, Any]) -> str:
    if check["outcome"] == "quote_not_found":
        return "QUOTE NOT FOUND in the datasheet: check it before trusting this claim."
    if check["outcome"] == "document_unavailable":
        return "Quote not checked: the datasheet is no longer stored."
    if check["outcome"] == "value_not_in_quote":
        return f"Quote found on page {check['page']}, but without the corrected number."
    return f"Quote found on page {check['page']}."


def _kind(value: CorrectedValue, parameter: JobParameter) -> str:
    described = " ".join([parameter.name, parameter.notes or "", *value.conditions])
    if _ABSOLUTE_MAX.search(described):
        return "max_rating"
    if value.min is not None and value.max is not None:
        return "range"
    if value.min is not None:
        return "min"
    if value.max is not None:
        return "max"
    return "typical"


def _needles(value: CorrectedValue, source_text: str) -> list[str]:
    """The stated numbers as printed in the source text (``3.0``, not ``3``), matched numerically token by
    token, so a needle never matches inside a longer number."""
    printed = [(token, _number(token)) for token in _NUMBER_TOKEN.findall(source_text)]
    needles: list[str] = []
    for number in (value.min, value.typical, value.max):
        if number is None:
            continue
        for token, parsed in printed:
            if parsed is not None and abs(parsed - number) <= 1e-9 * max(1.0, abs(number)):
                if token not in needles:
                    needles.append(token)
                break
    return needles[:3]


def _number(token: str) -> float | None:
    try:
        return float(token.replace(",", "."))
    except ValueError:
        return None


def _document_key(filename: str, sha256: str, keys_by_sha: dict[str, str]) -> str:
    if sha256 in keys_by_sha:
        return keys_by_sha[sha256]
    stem = filename.rsplit(".", 1)[0] if "." in filename else filename
    key = re.sub(r"[^a-z0-9]+", "_", stem.lower()).strip("_") or "document"
    if key in keys_by_sha.values():
        key = f"{key}_{sha256[:8]}"
    keys_by_sha[sha256] = key
    return key


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60] or "parameter"


def _unique(candidate: str, used: set[str]) -> str:
    claim_id, n = candidate, 2
    while claim_id in used:
        claim_id, n = f"{candidate}-{n}", n + 1
    used.add(claim_id)
    return claim_id


def _collapse(text: str) -> str:
    return " ".join(text.split())
