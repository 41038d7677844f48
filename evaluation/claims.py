"""Gold claim files (the ``dev_claims.yaml`` schema) and the one function that turns a claim into a request.

A claim file is ``{version, documents: {key: {file, pages, title, sha256?}}, claims: [...]}``; the reviewer
corrections export (``GET /v1/review/corrections.yaml``) uses the same schema, with ``sha256`` on each document
and without ``needles``/``source_text`` when the reviewer gave no quote, so both load here.

:func:`request_for` is the only way a claim becomes a :class:`ParameterRequest`. A late audit in the study found
the gold value and tolerance leaking into the prompt because a prompt builder serialised the whole claim spec;
projecting through one allow-listed chokepoint makes that impossible by construction.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from app.agent.schemas import ParameterRequest
from app.errors import InvalidInput

Kind = Literal["typical", "range", "max_rating", "min", "max"]


class ClaimDocument(BaseModel):
    model_config = ConfigDict(extra="allow")

    key: str
    file: str
    pages: int | None = None
    title: str | None = None
    sha256: str | None = None


class Claim(BaseModel):
    """One hand-verified value. Everything except ``parameter``, ``unit`` and ``conditions`` is gold and must
    never reach a model."""

    model_config = ConfigDict(extra="allow")

    id: str
    document: str
    parameter: str
    symbol: str | None = None
    kind: Kind = "typical"
    min: float | None = None
    typical: float | None = None
    max: float | None = None
    unit: str | None = None
    conditions: list[str] = Field(default_factory=list)
    page: int | None = None
    source_text: str | None = None
    needles: list[str] = Field(default_factory=list)
    notes: str | None = None
    # Tolerance t of the stated value, in the claim's unit (the measurement oracle's √(u² + t²)).
    tolerance: float | None = Field(default=None, ge=0)

    @field_validator("conditions", "needles", mode="before")
    @classmethod
    def _none_is_empty(cls, value: Any) -> Any:
        return [] if value is None else value

    @field_validator("min", "typical", "max", "tolerance", mode="before")
    @classmethod
    def _decimal_comma(cls, value: Any) -> Any:
        return value.replace(",", ".") if isinstance(value, str) else value

    @model_validator(mode="after")
    def _states_a_value(self) -> Claim:
        if self.min is None and self.typical is None and self.max is None:
            raise ValueError(f"claim {self.id!r} states none of min, typical, max")
        return self

    @property
    def stated_fields(self) -> dict[str, float]:
        return {f: v for f in ("min", "typical", "max") if (v := getattr(self, f)) is not None}


class ClaimSet(BaseModel):
    version: int = 1
    documents: dict[str, ClaimDocument]
    claims: list[Claim]
    source: str | None = None  # the file it was loaded from, for the report

    def claim(self, claim_id: str) -> Claim:
        for claim in self.claims:
            if claim.id == claim_id:
                return claim
        raise KeyError(claim_id)

    def by_document(self) -> dict[str, list[Claim]]:
        grouped: dict[str, list[Claim]] = {}
        for claim in self.claims:
            grouped.setdefault(claim.document, []).append(claim)
        return grouped

    def select(self, ids: list[str] | None = None, documents: list[str] | None = None) -> ClaimSet:
        """A subset by claim id and/or document key (unknown names are an error, not silently empty)."""
        claims = self.claims
        if documents:
            unknown = sorted(set(documents) - set(self.documents))
            if unknown:
                raise InvalidInput(f"Unknown document key(s): {', '.join(unknown)}.", code="unknown_document")
            claims = [c for c in claims if c.document in documents]
        if ids:
            known = {c.id for c in self.claims}
            unknown = sorted(set(ids) - known)
            if unknown:
                raise InvalidInput(f"Unknown claim id(s): {', '.join(unknown)}.", code="unknown_claim")
            claims = [c for c in claims if c.id in ids]
        used = {c.document for c in claims}
        return ClaimSet(version=self.version, documents={k: d for k, d in self.documents.items() if k in used},
                        claims=claims, source=self.source)

    def to_yaml_dict(self) -> dict[str, Any]:
        """The file form (used to snapshot the claims an archive was graded with)."""
        documents = {k: d.model_dump(exclude={"key"}, exclude_none=True) for k, d in self.documents.items()}
        claims = [c.model_dump(exclude_none=True) for c in self.claims]
        return {"version": self.version, "documents": documents, "claims": claims}


def parse_claims(data: Any, source: str | None = None) -> ClaimSet:
    """Validate a parsed claim file; errors name the claim and field at fault."""
    if not isinstance(data, dict) or not isinstance(data.get("claims"), list):
        raise InvalidInput(f"{source or 'claims'}: not a claim file (needs `documents` and a `claims` list).",
                           code="invalid_claims")
    raw_documents = data.get("documents") or {}
    if not isinstance(raw_documents, dict):
        raise InvalidInput(f"{source or 'claims'}: `documents` must be a mapping.", code="invalid_claims")
    try:
        documents = {key: ClaimDocument(key=key, **(value or {})) for key, value in raw_documents.items()}
        claims = [Claim.model_validate(item) for item in data["claims"]]
    except (ValidationError, TypeError) as exc:
        raise InvalidInput(f"{source or 'claims'}: {exc}", code="invalid_claims") from exc
    seen: set[str] = set()
    for claim in claims:
        if claim.id in seen:
            raise InvalidInput(f"{source or 'claims'}: duplicate claim id {claim.id!r}.", code="invalid_claims")
        seen.add(claim.id)
        if claim.document not in documents:
            raise InvalidInput(f"{source or 'claims'}: claim {claim.id!r} names unknown document "
                               f"{claim.document!r}.", code="invalid_claims")
    return ClaimSet(version=int(data.get("version") or 1), documents=documents, claims=claims, source=source)


def load_claims(path: Path) -> ClaimSet:
    if not path.is_file():
        raise InvalidInput(f"No claim file at {path}.", code="claims_not_found")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise InvalidInput(f"{path}: invalid YAML: {exc}", code="invalid_claims") from exc
    return parse_claims(data, source=str(path))


def resolve_document(document: ClaimDocument, datasheets: Path) -> Path:
    """The PDF for a document key: ``DIR/file``, else (when the claim file records one) the PDF in ``DIR``
    with the same sha256, since exported corrections keep the uploaded file name, which may differ."""
    candidate = datasheets / document.file
    if candidate.is_file():
        return candidate
    if document.sha256:
        for pdf in sorted(datasheets.glob("*.pdf")):
            if hashlib.sha256(pdf.read_bytes()).hexdigest() == document.sha256:
                return pdf
    raise InvalidInput(f"Datasheet for document {document.key!r} not found: no {document.file} in {datasheets}.",
                       code="datasheet_not_found")


def request_for(claim: Claim) -> ParameterRequest:
    """The allow-listed projection of a claim: what an engineer would type, nothing that was checked by hand.

    ``notes`` stays empty: a claim's notes describe neighbouring rows and alternative readings (i.e. values).
    """
    return ParameterRequest(name=claim.parameter, unit=claim.unit, conditions=list(claim.conditions), notes=None)


def dump_claims(claims: ClaimSet, path: Path) -> None:
    path.write_text(yaml.safe_dump(claims.to_yaml_dict(), sort_keys=False, allow_unicode=True, width=120),
                    encoding="utf-8")
