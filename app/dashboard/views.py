"""The review-queue dashboard: server-rendered pages for people who decide on flagged runs.

Routes are thin. The queue, the items, their neighbours and the decisions come from ``decisions.py``
(shared with the JSON API, so both apply the same tenant scoping), the dispatch record from
``app.dispatch.service``. What lives here is presentation: the queue shown newest first with an age filter,
the waterfall geometry of a trace, and the source page drawn with the grounded quote's boxes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlencode

from fastapi import APIRouter, Depends, FastAPI, Form, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from jinja2 import pass_context
from pydantic import ValidationError
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.auth.keys import lookup
from app.auth.security import KEY_COOKIE, Principal, require_role
from app.config import get_settings
from app.contracts import CorrectedValue
from app.dashboard.legend import ATTRIBUTIONS, SPAN_OUTCOMES, attribution_text, attribution_title
from app.db import get_session
from app.dispatch import semconv
from app.dispatch.models import SpanRecord
from app.dispatch.service import build_tree, load_run
from app.documents import store
from app.documents.render import page_count, page_geometry, render_png
from app.errors import DsxError, Forbidden, InvalidInput, NotFound, Unauthorized
from app.flows import review as review_flow
from app.http_input import OptionalRowId, RowId
from app.review import decisions
from app.review.decisions import (
    QUEUE_STATUSES,
    REVIEW_SEVERITIES,
    QueuePlace,
    QueueStatus,
    ReviewCorrection,
    ReviewDecisionRequest,
    ReviewQueueItem,
)
from app.review.models import Attribution, Grounding
from app.tables.jobs import Extraction, Job, JobParameter
from app.urls import internal_path, public_path

PACKAGE_DIR = Path(__file__).resolve().parent
TEMPLATES_DIR = PACKAGE_DIR / "templates"
STATIC_DIR = PACKAGE_DIR / "static"
STATIC_PATH = "/review/static"

router = APIRouter(prefix="/review", tags=["review dashboard"], include_in_schema=False)
templates = Jinja2Templates(directory=TEMPLATES_DIR)

AgeFilter = Literal["", "1h", "24h", "7d", "30d"]
AGES: dict[str, timedelta] = {"1h": timedelta(hours=1), "24h": timedelta(days=1), "7d": timedelta(days=7),
                              "30d": timedelta(days=30)}
PAGE_SIZE = 50
# The JSON API's own page maximum, enough for an item's whole decision history.
_CHUNK = 500
REVIEWER_COOKIE = "dsx_reviewer"
KEY_COOKIE_MAX_AGE_S = 12 * 3600
REVIEWER_ROLE = "reviewer"

# Page images: resolution bounds, and the highlight drawn over a grounded quote.
DEFAULT_DPI = 110
MIN_DPI, MAX_DPI = 50, 200
_GROUNDED_OUTCOMES = frozenset({"grounded", "grounded_other_page", "value_not_in_quote"})


# --- Who is reviewing -------------------------------------------------------------------------------------


class LoginRequired(Exception):
    """A dashboard page was opened without a usable API key: send the browser to the sign-in form."""

    def __init__(self, target: str, reason: str) -> None:
        super().__init__(reason)
        self.target = target
        self.reason = reason


_require_reviewer = require_role(REVIEWER_ROLE)


def reviewer_page(request: Request) -> Principal:
    """``require_role("reviewer")`` for pages: a browser without a key is redirected to sign in instead of
    receiving a problem document. Images and fragments keep the plain 401/403 of the API."""
    try:
        return _require_reviewer(request)
    except (Unauthorized, Forbidden) as exc:
        target = internal_path(request, str(request.url.path)) + (f"?{request.url.query}" if request.url.query else "")
        raise LoginRequired(target if request.method == "GET" else "/review", exc.detail) from exc


def _keys_mode() -> bool:
    return get_settings().effective_auth_mode == "keys"


def _safe_target(target: str | None) -> str:
    """Only a dashboard path may follow a sign-in (no open redirect to another site)."""
    if target and target.startswith("/review") and not target.startswith("//"):
        return target
    return "/review"


# --- Queue filters and ordering ---------------------------------------------------------------------------


@dataclass(frozen=True)
class QueueFilters:
    """What the reviewer narrowed the queue to; carried from the queue to item pages and back."""

    rule: str | None = None
    model: str | None = None
    job: str | None = None
    age: str = ""
    status: str = "open"

    def but(self, **changes: Any) -> QueueFilters:
        """The same filters with some changed (links that narrow or widen the queue)."""
        return replace(self, **changes)

    def service_kwargs(self) -> dict[str, Any]:
        return {"rule": self.rule, "model": self.model, "job_id": self.job, "status": self.status,
                "since": self.cutoff}

    def params(self) -> dict[str, str]:
        values = {"rule": self.rule, "model": self.model, "job": self.job, "age": self.age,
                  "status": None if self.status == "open" else self.status}
        return {k: v for k, v in values.items() if v}

    def query(self, **extra: Any) -> str:
        merged = {**self.params(), **{k: str(v) for k, v in extra.items() if v not in (None, "")}}
        return f"?{urlencode(merged)}" if merged else ""

    @property
    def cutoff(self) -> datetime | None:
        return datetime.now(UTC) - AGES[self.age] if self.age else None


def _filters(
    rule: Annotated[str | None, Query(max_length=64)] = None,
    model: Annotated[str | None, Query(max_length=200)] = None,
    job: Annotated[str | None, Query(max_length=32)] = None,
    age: Annotated[AgeFilter, Query(description="Only items newer than this")] = "",
    status: Annotated[QueueStatus, Query()] = "open",
) -> QueueFilters:
    return QueueFilters(rule=(rule or "").strip() or None, model=(model or "").strip() or None,
                        job=(job or "").strip() or None, age=age, status=status)


def _aware(moment: datetime) -> datetime:
    """SQLite hands timestamps back without a zone; every stored time is UTC."""
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


@dataclass
class QueueWindow:
    items: list[ReviewQueueItem]
    total: int
    counts_by_rule: dict[str, int]


def queue_window(session: Session, tenant: str | None, filters: QueueFilters, offset: int,
                 limit: int) -> QueueWindow:
    """One page of the queue, newest first, with the per-rule counts under every filter but the rule."""
    page = decisions.review_queue(session, tenant=tenant, **filters.service_kwargs(), newest_first=True,
                                  limit=limit, offset=offset)
    return QueueWindow(page.items, page.total, page.counts_by_rule)


def neighbours(session: Session, tenant: str | None, filters: QueueFilters, extraction_id: int) -> QueuePlace:
    """Where an item sits in the filtered queue as the queue page lists it, and the items before and after
    it there (for j/k)."""
    return decisions.queue_place(session, extraction_id, tenant=tenant, **filters.service_kwargs(),
                                 newest_first=True)


# --- Dispatch timeline ------------------------------------------------------------------------------------


@dataclass
class TimelineRow:
    """One span as a bar of the waterfall."""

    span_id: str
    name: str
    kind: str  # agent | llm | tool | other
    depth: int
    offset_pct: float
    width_pct: float
    duration_ms: float
    status: str
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None
    outcome: str | None = None
    error: str | None = None
    evidence_of: list[str] = field(default_factory=list)
    attributions: list[Attribution] = field(default_factory=list)
    has_payload: bool = False


@dataclass
class Timeline:
    rows: list[TimelineRow]
    duration_ms: float
    llm_calls: int
    tool_calls: int
    input_tokens: int
    output_tokens: int
    cost_usd: float


def _span_kind(span: dict[str, Any]) -> str:
    operation = span["attributes"].get(semconv.GEN_AI_OPERATION)
    name = span["name"]
    if operation == "chat" or name.startswith(f"{semconv.SPAN_CHAT_PREFIX} "):
        return "llm"
    if operation == "execute_tool" or name.startswith(f"{semconv.SPAN_TOOL_PREFIX} "):
        return "tool"
    if operation == "invoke_agent" or name == semconv.SPAN_INVOKE_AGENT:
        return "agent"
    return "other"


def _int_or_none(value: Any) -> int | None:
    try:
        return int(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def _float_or_none(value: Any) -> float | None:
    try:
        return float(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def build_timeline(spans: list[SpanRecord], evidence: dict[str, list[str]],
                   attributions: dict[str, list[Attribution]]) -> Timeline | None:
    """The trace as waterfall rows (depth-first, children under parents), bars scaled to the trace's span."""
    if not spans:
        return None
    start = min(s.start_ns for s in spans)
    end = max(s.end_ns for s in spans)
    total_ns = max(end - start, 1)
    rows: list[TimelineRow] = []

    def visit(node: dict[str, Any], depth: int) -> None:
        attributes = node["attributes"]
        kind = _span_kind(node)
        outcome = attributes.get(semconv.DSX_TOOL_OUTCOME) or attributes.get(semconv.DSX_LLM_OUTCOME) \
            or attributes.get(semconv.DSX_OUTCOME)
        error = attributes.get(semconv.DSX_TOOL_ERROR_CODE) or attributes.get(semconv.DSX_LLM_ERROR_TYPE) \
            or (node["status_message"] if node["status_code"] == "ERROR" else None)
        rows.append(TimelineRow(
            span_id=node["span_id"],
            name=node["name"],
            kind=kind,
            depth=depth,
            offset_pct=round(100 * (node["start_ns"] - start) / total_ns, 3),
            width_pct=round(max(100 * (node["end_ns"] - node["start_ns"]) / total_ns, 0.4), 3),
            duration_ms=node["duration_ms"],
            status=node["status_code"],
            input_tokens=_int_or_none(attributes.get(semconv.GEN_AI_INPUT_TOKENS)),
            output_tokens=_int_or_none(attributes.get(semconv.GEN_AI_OUTPUT_TOKENS)),
            cost_usd=_float_or_none(attributes.get(semconv.DSX_LLM_COST_USD)),
            outcome=str(outcome) if outcome is not None else None,
            error=str(error) if error else None,
            evidence_of=evidence.get(node["span_id"], []),
            attributions=attributions.get(node["span_id"], []),
            has_payload=bool(node.get("has_payload")),
        ))
        for child in node["children"]:
            visit(child, depth + 1)

    payload_ids = {s.span_id for s in spans if s.payload}
    for root in build_tree(spans, include_payload=False):
        _mark_payload(root, payload_ids)
        visit(root, 0)
    llm = [r for r in rows if r.kind == "llm"]
    return Timeline(
        rows=rows,
        duration_ms=total_ns / 1e6,
        llm_calls=len(llm),
        tool_calls=sum(1 for r in rows if r.kind == "tool"),
        input_tokens=sum(r.input_tokens or 0 for r in llm),
        output_tokens=sum(r.output_tokens or 0 for r in llm),
        cost_usd=sum(r.cost_usd or 0.0 for r in llm),
    )


def _mark_payload(node: dict[str, Any], payload_ids: set[str]) -> None:
    node["has_payload"] = node["span_id"] in payload_ids
    for child in node["children"]:
        _mark_payload(child, payload_ids)


# --- Source page ------------------------------------------------------------------------------------------


@dataclass
class SourceView:
    """What the page panel shows: which page, its highlight boxes, and the grounding verdict in words."""

    state: str  # grounded | not_found | ungrounded | no_quote | no_document
    page: int | None
    page_count: int
    boxes: list[list[float]]
    groundings: list[Grounding]
    page_width: float | None = None
    page_height: float | None = None
    focus: float | None = None  # where the first highlight sits, as a fraction of the shown page's height


def _grounded_boxes(groundings: list[Grounding], page: int) -> list[list[float]]:
    return [list(box) for g in groundings if g.page == page and g.outcome in _GROUNDED_OUTCOMES
            for box in _highlight_boxes(g) if len(box) == 4]


def _highlight_boxes(grounding: Grounding) -> list[list[float]]:
    """The value's own word boxes when grounding recorded them (``detail["value_boxes"]``), else the boxes of the
    whole located passage."""
    detail = grounding.detail if isinstance(grounding.detail, dict) else {}
    own = detail.get("value_boxes")
    return list(own) if isinstance(own, list) and own else list(grounding.boxes or [])


def source_view(job: Job, extraction: Extraction, groundings: list[Grounding]) -> SourceView:
    path = store.local_path(job.blob_sha256)
    if not path.exists():
        return SourceView("no_document", None, 0, [], groundings)
    pages = page_count(path)
    located = [g for g in groundings if g.page and g.outcome in _GROUNDED_OUTCOMES]
    if located:
        state, page = "grounded", located[0].page
    elif groundings and any(g.outcome == "quote_not_found" for g in groundings) and extraction.quote:
        state, page = "not_found", extraction.source_page
    elif not (extraction.quote or "").strip():
        state, page = "no_quote", extraction.source_page
    else:
        state, page = "ungrounded", extraction.source_page
    if page is None or not 1 <= page <= pages:
        page = 1 if pages else None
    boxes = _grounded_boxes(groundings, page) if page else []
    width = height = focus = None
    if page is not None:
        geometry = page_geometry(path, page, boxes[0] if boxes else None)
        width, height, focus = geometry.width, geometry.height, geometry.focus
    return SourceView(state, page, pages, boxes, groundings, width, height, focus)


# --- Item assembly ----------------------------------------------------------------------------------------


@dataclass
class ItemContext:
    item: ReviewQueueItem
    job: Job
    parameter: JobParameter
    extraction: Extraction
    source: SourceView
    timeline: Timeline | None
    history: list[decisions.ReviewDecision]
    neighbours: QueuePlace


def _load_item(session: Session, principal: Principal, extraction_id: int) -> tuple[ReviewQueueItem, Extraction]:
    item = decisions.review_item(session, extraction_id, tenant=principal.tenant)  # NotFound across tenants
    extraction = session.get(Extraction, extraction_id)
    assert extraction is not None  # review_item just loaded it
    return item, extraction


def item_context(session: Session, principal: Principal, extraction_id: int, filters: QueueFilters) -> ItemContext:
    item, extraction = _load_item(session, principal, extraction_id)
    job = session.get(Job, extraction.job_id)
    parameter = session.get(JobParameter, extraction.parameter_id)
    assert job is not None and parameter is not None
    groundings = list(session.scalars(
        select(Grounding).where(Grounding.extraction_id == extraction.id).order_by(Grounding.value_index,
                                                                                    Grounding.id)))
    evidence: dict[str, list[str]] = {}
    for flag in item.flags:
        for span_id in flag.evidence.get("span_ids", []) or []:
            evidence.setdefault(str(span_id), []).append(flag.rule)
    attributions: dict[str, list[Attribution]] = {}
    for attribution in session.scalars(select(Attribution).where(Attribution.extraction_id == extraction.id)):
        if attribution.span_id:
            attributions.setdefault(attribution.span_id, []).append(attribution)
    spans = load_run(session, extraction.trace_id, extraction.root_span_id) if extraction.trace_id else []
    history = decisions.list_decisions(session, tenant=principal.tenant, extraction_id=extraction.id,
                                       limit=_CHUNK).items
    return ItemContext(
        item=item, job=job, parameter=parameter, extraction=extraction,
        source=source_view(job, extraction, groundings),
        timeline=build_timeline(spans, evidence, attributions),
        history=history,
        neighbours=neighbours(session, principal.tenant, filters, extraction.id),
    )


# --- Template helpers -------------------------------------------------------------------------------------


def _number(value: float | None) -> str:
    return "" if value is None else f"{value:g}"


def _value_text(value: Any) -> str:
    """A value as a datasheet prints it: "2.7 … 5.5 V (typ 3.3)" with its conditions."""
    get = value.get if isinstance(value, dict) else lambda k: getattr(value, k, None)
    low, typical, high = get("min"), get("typical"), get("max")
    unit = _OHM.sub("Ω", get("unit") or "")
    parts = []
    if low is not None and high is not None:
        parts.append(f"{_number(low)} … {_number(high)}")
    elif low is not None:
        parts.append(f"≥ {_number(low)}")  # a one-sided limit, not a range to infinity
    elif high is not None:
        parts.append(f"≤ {_number(high)}")
    if typical is not None:
        parts.append(f"(typ {_number(typical)})" if parts else _number(typical))
    text = " ".join(parts)
    return f"{text} {unit}".strip()


_OHM = re.compile(r"ohms?\b", re.IGNORECASE)


def _age(moment: datetime | None) -> str:
    if moment is None:
        return ""
    seconds = max((datetime.now(UTC) - _aware(moment)).total_seconds(), 0)
    for size, suffix in ((86400, "d"), (3600, "h"), (60, "min")):
        if seconds >= size:
            return f"{int(seconds // size)} {suffix} ago"
    return "just now"


def _pretty(value: Any) -> str:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return value
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def _top_severity(item: ReviewQueueItem) -> str:
    ranked = [f.severity for f in item.flags if f.severity in REVIEW_SEVERITIES]
    return "error" if "error" in ranked else ("warning" if ranked else "info")


@pass_context
def _url(context: Mapping[str, Any], path: str) -> str:
    """A link in a template, under the gateway prefix (``DSX_ROOT_PATH``)."""
    return public_path(context["request"], path)


@pass_context
def _static(context: Mapping[str, Any], name: str) -> str:
    return public_path(context["request"], f"{STATIC_PATH}/{name}")


templates.env.filters.update(number=_number, value_text=_value_text, age=_age, pretty=_pretty,
                             attribution_text=attribution_text, attribution_title=attribution_title)
templates.env.globals.update(span_outcome_legend=SPAN_OUTCOMES, attribution_legend=ATTRIBUTIONS)
templates.env.globals.update(static=_static, url=_url, top_severity=_top_severity,
                             review_severities=REVIEW_SEVERITIES)


def _page(request: Request, name: str, context: dict[str, Any], status_code: int = 200) -> HTMLResponse:
    principal = getattr(request.state, "principal", None)
    signed_in = principal if _keys_mode() and principal is not None and principal.key_id is not None else None
    return templates.TemplateResponse(request, name, {"signed_in": signed_in, **context}, status_code=status_code)


def _not_found(request: Request, exc: DsxError) -> HTMLResponse:
    return _page(request, "not_found.html", {"message": exc.detail}, status_code=404)


# --- Routes -----------------------------------------------------------------------------------------------


@router.get("", response_class=HTMLResponse)
def queue_page(
    request: Request,
    filters: QueueFilters = Depends(_filters),
    page: Annotated[int, Query(ge=1, le=10_000)] = 1,
    done: OptionalRowId = None,
    principal: Principal = Depends(reviewer_page),
    session: Session = Depends(get_session, scope="function"),
) -> HTMLResponse:
    window = queue_window(session, principal.tenant, filters, (page - 1) * PAGE_SIZE, PAGE_SIZE)
    pages = max((window.total + PAGE_SIZE - 1) // PAGE_SIZE, 1)
    return _page(request, "queue.html", {
        "filters": filters, "window": window, "page": page, "pages": pages, "page_size": PAGE_SIZE,
        "statuses": QUEUE_STATUSES, "ages": ["", *AGES], "done": _just_decided(session, principal, done),
    })


def _just_decided(session: Session, principal: Principal, extraction_id: int | None) -> ReviewQueueItem | None:
    if extraction_id is None:
        return None
    try:
        return decisions.review_item(session, extraction_id, tenant=principal.tenant)
    except NotFound:
        return None


@router.get("/items/{extraction_id}", response_class=HTMLResponse)
def item_page(
    request: Request,
    extraction_id: RowId,
    filters: QueueFilters = Depends(_filters),
    done: OptionalRowId = None,
    principal: Principal = Depends(reviewer_page),
    session: Session = Depends(get_session, scope="function"),
) -> HTMLResponse:
    try:
        context = item_context(session, principal, extraction_id, filters)
    except NotFound as exc:
        return _not_found(request, exc)
    return _item_response(request, session, principal, context, filters, done=done)


def _item_response(request: Request, session: Session, principal: Principal, context: ItemContext,
                   filters: QueueFilters, *, done: int | None = None, error: str | None = None,
                   form: dict[str, str] | None = None, status_code: int = 200) -> HTMLResponse:
    first = context.item.values[0] if context.item.values else None
    defaults = {
        "min": _number(first.min) if first else "", "typical": _number(first.typical) if first else "",
        "max": _number(first.max) if first else "", "unit": (first.unit if first else None) or context.parameter.unit
        or "", "conditions": "; ".join(first.conditions) if first else "",
        "page": str(context.item.source_page or ""), "quote": context.item.quote or "", "comment": "",
    }
    return _page(request, "item.html", {
        "ctx": context, "item": context.item, "filters": filters, "error": error,
        "nb": context.neighbours, "source": context.source,
        "span_names": {row.span_id: row.name for row in context.timeline.rows} if context.timeline else {},
        "form": {**defaults, **(form or {})}, "done": _just_decided(session, principal, done),
        "reviewer": request.cookies.get(REVIEWER_COOKIE, ""),
        "keys_mode": get_settings().effective_auth_mode == "keys",
    }, status_code=status_code)


def _optional_float(raw: str, label: str) -> float | None:
    raw = raw.strip().replace("−", "-").replace(",", ".")
    if not raw:
        return None
    try:
        return float(raw)
    except ValueError as exc:
        raise InvalidInput(f"{label} must be a number, not {raw!r}.", code="invalid_correction") from exc


def _correction(form: dict[str, str]) -> ReviewCorrection:
    try:
        value = CorrectedValue(
            min=_optional_float(form["min"], "Min"), typical=_optional_float(form["typical"], "Typical"),
            max=_optional_float(form["max"], "Max"), unit=form["unit"].strip() or None,
            conditions=[c.strip() for c in form["conditions"].split(";") if c.strip()],
        )
        page = int(form["page"]) if form["page"].strip() else None
        return ReviewCorrection(values=[value], source_page=page, quote=form["quote"].strip() or None)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise InvalidInput(f"Correction: {first['msg'].removeprefix('Value error, ')}.",
                           code="invalid_correction") from exc
    except ValueError as exc:
        raise InvalidInput("Page must be a whole number.", code="invalid_correction") from exc


@router.post("/items/{extraction_id}/decision", response_class=HTMLResponse)
def decide(
    request: Request,
    extraction_id: RowId,
    decision: Annotated[Literal["approve", "correct", "reject"], Form()],
    comment: Annotated[str, Form(max_length=4000)] = "",
    reviewer: Annotated[str, Form(max_length=200)] = "",
    value_min: Annotated[str, Form(max_length=64)] = "",
    value_typical: Annotated[str, Form(max_length=64)] = "",
    value_max: Annotated[str, Form(max_length=64)] = "",
    unit: Annotated[str, Form(max_length=64)] = "",
    conditions: Annotated[str, Form(max_length=2000)] = "",
    page: Annotated[str, Form(max_length=8)] = "",
    quote: Annotated[str, Form(max_length=4000)] = "",
    next_id: Annotated[int | None, Form(alias="next")] = None,
    filters: QueueFilters = Depends(_filters),
    principal: Principal = Depends(reviewer_page),
    session: Session = Depends(get_session, scope="function"),
) -> Response:
    """Record a decision from the item page, then move on to the next item of the queue (post-redirect-get)."""
    form = {"min": value_min, "typical": value_typical, "max": value_max, "unit": unit, "conditions": conditions,
            "page": page, "quote": quote, "comment": comment}
    try:
        body = ReviewDecisionRequest(decision=decision, comment=comment or None, reviewer=reviewer or None,
                                     correction=_correction(form) if decision == "correct" else None)
        signed_by = decisions.resolve_reviewer(auth_mode=get_settings().effective_auth_mode,
                                               principal_name=principal.name, requested=body.reviewer)
        review_flow.decide(session, extraction_id, body, reviewer=signed_by, tenant=principal.tenant)
    except NotFound as exc:
        return _not_found(request, exc)
    except InvalidInput as exc:
        session.rollback()
        context = item_context(session, principal, extraction_id, filters)
        return _item_response(request, session, principal, context, filters, error=exc.detail,
                              form={**form, "decision": decision}, status_code=422)
    session.commit()  # visible to the next request (and the API) before the redirect is followed
    target = f"/review/items/{next_id}" if next_id else "/review"
    response = RedirectResponse(public_path(request, target) + filters.query(done=extraction_id), status_code=303)
    if reviewer.strip() and get_settings().effective_auth_mode != "keys":
        response.set_cookie(REVIEWER_COOKIE, reviewer.strip(), max_age=180 * 86400, httponly=True, samesite="lax")
    return response


@router.get("/items/{extraction_id}/page.png", responses={200: {"content": {"image/png": {}}}})
def page_image(
    extraction_id: RowId,
    page: Annotated[int | None, Query(ge=1)] = None,
    dpi: Annotated[int, Query(ge=MIN_DPI, le=MAX_DPI)] = DEFAULT_DPI,
    principal: Principal = Depends(_require_reviewer),
    session: Session = Depends(get_session, scope="function"),
) -> Response:
    """A page of the item's datasheet, with the grounded quote's boxes highlighted where they fall on it."""
    _item, extraction = _load_item(session, principal, extraction_id)
    job = session.get(Job, extraction.job_id)
    assert job is not None
    groundings = list(session.scalars(select(Grounding).where(Grounding.extraction_id == extraction.id)))
    view = source_view(job, extraction, groundings)
    if view.state == "no_document":
        raise NotFound("The datasheet of this item is no longer stored.", code="document_not_found")
    number = page or view.page
    if number is None or not 1 <= number <= view.page_count:
        raise NotFound(f"The datasheet has no page {number} (it has {view.page_count}).", code="page_not_found")
    png, _, _ = render_png(store.local_path(job.blob_sha256), number, boxes=_grounded_boxes(groundings, number),
                           dpi=dpi)
    return Response(png, media_type="image/png", headers={"Cache-Control": "private, max-age=300"})


@router.get("/items/{extraction_id}/spans/{span_id}", response_class=HTMLResponse)
def span_payload(
    request: Request,
    extraction_id: RowId,
    span_id: str,
    principal: Principal = Depends(_require_reviewer),
    session: Session = Depends(get_session, scope="function"),
) -> HTMLResponse:
    """The full input and output of one span (an htmx fragment, loaded when its row is expanded)."""
    _item, extraction = _load_item(session, principal, extraction_id)
    span = session.scalar(select(SpanRecord).where(SpanRecord.trace_id == extraction.trace_id,
                                                   SpanRecord.span_id == span_id)) if extraction.trace_id else None
    if span is None:
        raise NotFound(f"Span {span_id} is not part of this item's dispatch record.", code="span_not_found")
    return _page(request, "_span_payload.html", {"span": span, "payload": span.payload or {}})


@router.get("/login", response_class=HTMLResponse)
def login_page(request: Request, next_path: Annotated[str | None, Query(alias="next")] = None,
               reason: Annotated[str | None, Query(max_length=300)] = None) -> Response:
    if not _keys_mode():
        return RedirectResponse(public_path(request, _safe_target(next_path)), status_code=303)
    return _page(request, "login.html", {"target": _safe_target(next_path), "error": reason})


@router.post("/login", response_class=HTMLResponse)
def login(
    request: Request,
    key: Annotated[str, Form(max_length=500)],
    next_path: Annotated[str | None, Form(alias="next")] = None,
    session: Session = Depends(get_session, scope="function"),
) -> Response:
    """Check a pasted API key once, then keep it in an HttpOnly, same-site cookie the API already accepts."""
    target = _safe_target(next_path)
    if not _keys_mode():
        return RedirectResponse(public_path(request, target), status_code=303)
    row = lookup(session, key.strip()) if key.strip() else None
    if row is None:
        return _page(request, "login.html", {"target": target, "error": "This API key is unknown or revoked."},
                     status_code=401)
    roles = set(row.roles or ())
    if REVIEWER_ROLE not in roles and "admin" not in roles:
        return _page(request, "login.html", {"target": target,
                                             "error": f"The key “{row.name}” lacks the reviewer role."},
                     status_code=403)
    response = RedirectResponse(public_path(request, target), status_code=303)
    # SameSite=strict: a page on another site cannot make the browser post a decision with this key.
    response.set_cookie(KEY_COOKIE, key.strip(), max_age=KEY_COOKIE_MAX_AGE_S, httponly=True, samesite="strict",
                        secure=request.url.scheme == "https", path="/")
    return response


@router.post("/logout")
def logout(request: Request) -> Response:
    response = RedirectResponse(public_path(request, "/review/login"), status_code=303)
    response.delete_cookie(KEY_COOKIE, path="/")
    return response


def _login_redirect(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, LoginRequired)
    query = urlencode({"next": exc.target, "reason": exc.reason})
    return RedirectResponse(public_path(request, f"/review/login?{query}"),
                            status_code=303)


def install(app: FastAPI) -> None:
    """Serve the dashboard from ``app``: its routes, its static files, and the sign-in redirect."""
    app.include_router(router)
    app.mount(STATIC_PATH, StaticFiles(directory=STATIC_DIR), name="review-static")
    app.add_exception_handler(LoginRequired, _login_redirect)
