"""Engines: single-pass (the whole document in one prompt) and agentic (tools), and the route between them.

``route()`` follows the study's operating rule: single-pass when the document fits the model's context
window and page cap (it agreed with agentic on fidelity in 68 of 75 cells at lower cost), agentic when it
does not (a 397-page datasheet was rejected or cost 208k input tokens single-pass; agentic read only the
pages each parameter needed). The offline reader navigates with tools, so it goes agentic unless
single-pass is asked for.

``run_parameter()`` is the one entry point: a root ``invoke_agent`` span per (parameter, role) holding
the ``route_engine`` decision and the loop's ``chat``/``execute_tool`` spans. ``phases`` and
``tool_runner`` default to production and exist for evaluation (withheld tools, emptied or decoy outputs,
a second phase after the submit).
"""

from __future__ import annotations

import base64
import time
from dataclasses import dataclass
from typing import Any

from opentelemetry.trace import Status, StatusCode

from app.agent import prompts, transport
from app.agent.loop import AgentLoop, Budgets, LoopResult, submission_dict
from app.agent.phases import Phase, production_phases, single_pass
from app.agent.registry import ModelConfig
from app.agent.schemas import EngineOutcome, ParameterRequest, RunContext, SubmittedExtraction
from app.agent.tools import DocumentToolRunner, ToolRunner, tool_surface_version
from app.agent.transport import Capabilities
from app.contracts import ENGINE_NAMES, Engine
from app.dispatch import propagation, semconv, telemetry
from app.documents import tables as table_builder
from app.documents.index import DatasheetIndex, PageInfo

AUTO, AGENTIC, SINGLE_PASS = Engine.AUTO.value, Engine.AGENTIC.value, Engine.SINGLE_PASS.value
ENGINES = ENGINE_NAMES
AGENT_NAME = "dsx-datasheet-extractor"

CHARS_PER_TOKEN = 4  # a conservative average for datasheet text (numbers and units tokenise densely)
CONTEXT_HEADROOM = 0.8  # share of the context window the document may take (prompt, tools and answer need room)
PROMPT_OVERHEAD_TOKENS = 2_000
PDF_TOKENS_PER_PAGE = 1_500  # native PDF input bills each page as an image plus its text
IMAGE_DPI = 100


@dataclass(frozen=True)
class RouteDecision:
    engine: str
    reason: str
    document_mode: str | None = None  # single-pass input: text | pdf | images
    estimated_tokens: int | None = None  # the single-pass prompt's size; None where the route did not need it


def _document_mode(index: DatasheetIndex, caps: Capabilities, model: ModelConfig) -> str | None:
    """How a single-pass prompt would carry the document: the native PDF block where the provider takes
    one, else the text layer, else page images; None when the model can take none of them."""
    if caps.pdf_input and not model.is_offline:
        return "pdf"
    if index.text_layer != "none":
        return "text"
    return "images" if caps.vision else None


def _estimated_tokens(index: DatasheetIndex, mode: str | None) -> int:
    """The prompt's size as the router compares it with the context window: in text mode the single-pass
    document exactly as it would be sent (text layer and tables), else the text layer plus the pages' images."""
    if mode in ("pdf", "images"):
        text_tokens = sum(len(p.text or "") for p in index.pages) // CHARS_PER_TOKEN
        return PROMPT_OVERHEAD_TOKENS + max(text_tokens, 0) + PDF_TOKENS_PER_PAGE * index.page_count
    return PROMPT_OVERHEAD_TOKENS + len(text_document(index)) // CHARS_PER_TOKEN


def text_document(index: DatasheetIndex) -> str:
    """The single-pass text document: each page's text layer with its tables as the table tool renders them
    (markdown rows, under a ``[table N]`` line), so a row's parameter, conditions, limits and unit arrive together
    instead of one cell per line. Built once per index."""
    return index.memo("single_pass_text_document",
                      lambda: prompts.document_block([_page_parts(index, page) for page in index.pages]))


def _page_parts(index: DatasheetIndex, page: PageInfo) -> list[prompts.PagePart]:
    text = page.text or ""
    if not page.has_text:
        return [text]
    tables = [prompts.DocumentTable(number=i + 1, markdown=table.markdown(), title=table.title,
                                    continued_from=page.number - 1
                                    if table_builder.continued_from_previous_page(index, page.number, i) else None)
              for i, table in enumerate(table_builder.page_tables(index, page.number))]
    tables = [t for t in tables if t.markdown.strip()]
    # After the whole page text rather than in place of the region's lines: the fidelity bench read more values
    # right, and fewer wrong, with the text layer kept whole (it also holds the headings and notes around a
    # table), at 1.45x the text layer's tokens against 1.15x.
    return [text, *tables]


def route(index: DatasheetIndex, model: ModelConfig, requested: str = AUTO,
          caps: Capabilities | None = None) -> RouteDecision:
    """The engine for this document and model, with a reason a person can check."""
    caps = caps or transport.capabilities(model)
    mode = _document_mode(index, caps, model)
    if requested not in ENGINES:
        raise ValueError(f"unknown engine {requested!r}")
    # The estimate is made where the decision or the prompt needs it: in text mode it builds every page's tables.
    if requested == AGENTIC:
        return RouteDecision(AGENTIC, "requested", None)
    if requested == SINGLE_PASS:
        return RouteDecision(SINGLE_PASS, "requested", mode or "text", _estimated_tokens(index, mode or "text"))
    if model.is_offline:
        return RouteDecision(AGENTIC, "the offline reader navigates with tools", None)
    if mode is None:
        return RouteDecision(AGENTIC, "no text layer, and the model takes neither PDF nor image input", None)
    if index.page_count > caps.max_pdf_pages:
        return RouteDecision(AGENTIC, f"{index.page_count} pages exceed the page cap of {caps.max_pdf_pages} "
                                      f"({caps.sources.get('max_pdf_pages')})", None)
    tokens = _estimated_tokens(index, mode)
    budget = int(caps.context_window * CONTEXT_HEADROOM)
    if tokens > budget:
        return RouteDecision(AGENTIC, f"about {tokens} tokens exceed {int(CONTEXT_HEADROOM * 100)}% of the "
                                      f"{caps.context_window}-token context window "
                                      f"({caps.sources.get('context_window')})", None, tokens)
    return RouteDecision(SINGLE_PASS, f"about {tokens} tokens and {index.page_count} pages fit the "
                                      f"{caps.context_window}-token context and {caps.max_pdf_pages}-page cap",
                         mode, tokens)


def _document(index: DatasheetIndex, mode: str, tool_runner: ToolRunner) -> str | list[dict[str, Any]]:
    """The single-pass document in ``mode`` (see ``_document_mode``)."""
    if mode == "pdf":
        data = base64.b64encode(index.path.read_bytes()).decode()
        return [
            {"type": "text", "text": f'<document pages="{index.page_count}">'},
            {"type": "file", "file": {"file_data": f"data:application/pdf;base64,{data}",
                                      "filename": index.path.name}},
            {"type": "text", "text": "</document>"},
        ]
    if mode == "images":
        parts: list[dict[str, Any]] = [{"type": "text", "text": f'<document pages="{index.page_count}">'}]
        for number in range(1, index.page_count + 1):
            image = tool_runner.execute("inspect_page", {"page": number, "dpi": IMAGE_DPI}).result.get("image") or {}
            parts.append({"type": "text", "text": f"--- page {number} ---"})
            if image.get("base64"):
                url = f"data:{image.get('mime', 'image/png')};base64,{image['base64']}"
                parts.append({"type": "image_url", "image_url": {"url": url}})
        parts.append({"type": "text", "text": "</document>"})
        return parts
    return text_document(index)


def _identity(model: ModelConfig, context: RunContext) -> dict[str, Any]:
    """Attributes on every span of the run: the ids the database indexes spans by, the model the metrics
    label calls with, and the tenant and role an LLM gateway attributes the calls to. The agent name is on the
    root."""
    attributes: dict[str, Any] = {
        semconv.DSX_MODEL_ALIAS: model.alias,
        semconv.GEN_AI_REQUEST_MODEL: model.litellm_model,
        semconv.DSX_TENANT: context.tenant,
        semconv.DSX_ROLE: context.role,
    }
    if context.job_id is not None:
        attributes[semconv.DSX_JOB_ID] = context.job_id
    if context.parameter_id is not None:
        attributes[semconv.DSX_PARAMETER_ID] = context.parameter_id
    if context.rule_set_version is not None:
        attributes[semconv.DSX_RULE_SET_VERSION] = context.rule_set_version
    return attributes


def _run_loop(*, model: ModelConfig, caps: Capabilities, tool_runner: ToolRunner, phases: list[Phase],
              messages: list[dict[str, Any]], attributes: dict[str, Any]) -> LoopResult:
    loop = AgentLoop(model=model, capabilities=caps, tracer=telemetry.get_tracer(), tool_runner=tool_runner,
                     phases=phases, attributes=attributes, budgets=Budgets.from_settings())
    return loop.run(messages)


def run_parameter(*, index: DatasheetIndex, request: ParameterRequest, model: ModelConfig, engine: str,
                  context: RunContext, phases: list[Phase] | None = None,
                  tool_runner: ToolRunner | None = None) -> EngineOutcome:
    """Answer one parameter with ``engine`` (auto | agentic | single-pass); never raises for model or
    provider failures, which come back as a typed ``error_code``."""
    started = time.perf_counter()
    phases = list(phases) if phases else production_phases()
    tool_runner = tool_runner if tool_runner is not None else DocumentToolRunner(index)
    caps = transport.capabilities(model)
    tracer = telemetry.get_tracer()
    identity = _identity(model, context)
    root_attributes = {**identity, semconv.GEN_AI_OPERATION: "invoke_agent", semconv.GEN_AI_AGENT_NAME: AGENT_NAME,
                       semconv.GEN_AI_PROVIDER_NAME: transport.endpoint(model).provider}
    # A child of the submitting request's span for a queued job (one trace from the HTTP gateway to the LLM
    # gateway), else a new trace whatever span the caller is in. Readers select a run by its root span id.
    with tracer.start_as_current_span(semconv.SPAN_INVOKE_AGENT, context=propagation.run_parent(),
                                      attributes=root_attributes) as root:
        decision = _traced_route(tracer, index, model, engine, caps, identity)
        identity[semconv.DSX_ENGINE] = decision.engine
        run_phases = single_pass(phases) if decision.engine == SINGLE_PASS else phases
        offered = [spec for phase in run_phases for spec in phase.offered]
        root.set_attributes({semconv.DSX_ENGINE: decision.engine,
                             semconv.DSX_TOOL_SURFACE_VERSION: tool_surface_version(offered)})

        mode = decision.document_mode
        result = _run(index, request, model, caps, tool_runner, run_phases, identity, decision.engine, mode)
        if decision.engine == SINGLE_PASS and mode == "pdf" and result.error_code == "provider_error" \
                and result.last_http_status == 400 and index.text_layer != "none":
            # Some gateways reject PDF blocks (HTTP 400) although the model behind them takes PDFs.
            root.add_event("document_mode_fallback", {"from": "pdf", "to": "text"})
            mode = "text"
            result = _run(index, request, model, caps, tool_runner, run_phases, identity, decision.engine, mode)

        extraction = result.submissions.get(run_phases[0].name)
        extraction = extraction if isinstance(extraction, SubmittedExtraction) else None
        _record_outcome(root, result, request, engine, run_phases, offered)
        span_context = root.get_span_context()

    return EngineOutcome(
        extraction=extraction,
        error_code=result.error_code,
        error_detail=result.error_detail,
        engine=decision.engine,
        model=model.alias,
        trace_id=f"{span_context.trace_id:032x}",
        root_span_id=f"{span_context.span_id:016x}",
        cost_usd=result.cost_usd,
        duration_ms=(time.perf_counter() - started) * 1000,
        extra={
            "route_reason": decision.reason,
            "document_mode": mode,
            "turns": result.turns,
            "attempts": result.attempts,
            "tool_calls": result.tool_calls,
            "input_tokens": result.input_tokens,
            "output_tokens": result.output_tokens,
            "request_chars": result.request_chars,
            "llm_ms": result.llm_ms,
            "tool_ms": result.tool_ms,
            "error_phase": result.error_phase,
            "submissions": {name: submission_dict(s) for name, s in result.submissions.items()},
        },
    )


def _traced_route(tracer: Any, index: DatasheetIndex, model: ModelConfig, engine: str, caps: Capabilities,
                  identity: dict[str, Any]) -> RouteDecision:
    """``route()`` inside its ``route_engine`` span, with the figures the decision was made from."""
    with tracer.start_as_current_span(semconv.SPAN_ROUTE, attributes=identity) as span:
        decision = route(index, model, engine, caps)
        span.set_attributes({
            semconv.DSX_ROUTE_ENGINE: decision.engine,
            semconv.DSX_ROUTE_REASON: decision.reason,
            semconv.DSX_ROUTE_DOCUMENT_MODE: decision.document_mode or "",
        })
        telemetry.set_payload(span, input={
            "requested": engine, "page_count": index.page_count, "text_layer": index.text_layer,
            "estimated_tokens": decision.estimated_tokens,
            "capabilities": {"context_window": caps.context_window, "max_pdf_pages": caps.max_pdf_pages,
                             "pdf_input": caps.pdf_input, "vision": caps.vision, "sources": caps.sources},
        }, output={"engine": decision.engine, "reason": decision.reason, "document_mode": decision.document_mode})
    return decision


def _record_outcome(root: Any, result: LoopResult, request: ParameterRequest, engine: str, phases: list[Phase],
                    offered: list[Any]) -> None:
    """The run's outcome on its ``invoke_agent`` span: totals as attributes, the request projection, the
    offered tool schemas and every phase's submission in the payload."""
    root.set_attributes({
        semconv.DSX_OUTCOME: result.outcome,
        semconv.DSX_TURNS: result.turns,
        semconv.GEN_AI_INPUT_TOKENS: result.input_tokens,
        semconv.GEN_AI_OUTPUT_TOKENS: result.output_tokens,
        semconv.DSX_LLM_COST_USD: result.cost_usd,
        semconv.DSX_LLM_REQUEST_CHARS: result.request_chars,
    })
    if result.error_code:
        root.set_attribute(semconv.DSX_ERROR_DETAIL, result.error_detail or "")
        root.set_status(Status(StatusCode.ERROR, result.error_code))
    telemetry.set_payload(root, input={
        "parameter_request": prompts.project_request(request),
        "requested_engine": engine,
        "phases": [{"name": p.name, "tools": [t.name for t in p.tools], "submit": p.submit.name} for p in phases],
        "tool_schemas": [spec.openai_tool() for spec in offered],
    }, output={
        "outcome": result.outcome,
        "submissions": {name: submission_dict(s) for name, s in result.submissions.items()},
        "error": {"code": result.error_code, "detail": result.error_detail, "phase": result.error_phase}
        if result.error_code else None,
    })


def _run(index: DatasheetIndex, request: ParameterRequest, model: ModelConfig, caps: Capabilities,
         tool_runner: ToolRunner, phases: list[Phase], identity: dict[str, Any], engine: str,
         mode: str | None) -> LoopResult:
    if engine == SINGLE_PASS:
        messages = prompts.single_pass_messages(request, _document(index, mode or "text", tool_runner))
    else:
        messages = prompts.agentic_messages(request)
    return _run_loop(model=model, caps=caps, tool_runner=tool_runner, phases=phases, messages=messages,
                     attributes=identity)
