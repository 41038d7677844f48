"""Span names and attribute keys of the dispatch record: one definition, read by the agent (writer),
the detectors, the metrics and the dashboard (readers).

Names follow the OpenTelemetry GenAI semantic conventions; our own attributes live under ``dsx.*``.
Full tool/LLM inputs and outputs are not attributes: they go to the span's stored ``payload``
(``{"input": ..., "output": ...}``), never truncated in the database.
"""

from __future__ import annotations

# Span names.
SPAN_INVOKE_AGENT = "invoke_agent"  # one per (parameter, role): the whole run of an engine
SPAN_ROUTE = "route_engine"  # the engine decision and its reason
SPAN_CHAT_PREFIX = "chat"  # "chat {model}": one per LLM call attempt
SPAN_TOOL_PREFIX = "execute_tool"  # "execute_tool {tool}": one per tool call
SPAN_EVALUATE = "evaluate_answer"  # the detectors' verdicts on a run, as gen_ai.evaluation.result events
OPERATION_EVALUATE = "evaluate"


def chat_span_name(model: str) -> str:
    return f"{SPAN_CHAT_PREFIX} {model}"


def tool_span_name(tool: str) -> str:
    return f"{SPAN_TOOL_PREFIX} {tool}"


# GenAI semantic-convention attributes.
GEN_AI_OPERATION = "gen_ai.operation.name"  # invoke_agent | chat | execute_tool
GEN_AI_REQUEST_MODEL = "gen_ai.request.model"
GEN_AI_RESPONSE_MODEL = "gen_ai.response.model"
GEN_AI_INPUT_TOKENS = "gen_ai.usage.input_tokens"
GEN_AI_OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
GEN_AI_FINISH_REASONS = "gen_ai.response.finish_reasons"
GEN_AI_TOOL_NAME = "gen_ai.tool.name"
GEN_AI_TOOL_CALL_ID = "gen_ai.tool.call.id"
GEN_AI_AGENT_NAME = "gen_ai.agent.name"
GEN_AI_PROVIDER_NAME = "gen_ai.provider.name"  # openai | anthropic | litellm_proxy | dsx.offline | ...
ERROR_TYPE = "error.type"  # the provider error class (or HTTP status) of a failed call
SERVER_ADDRESS = "server.address"
SERVER_PORT = "server.port"
# Detector verdicts as GenAI evaluation events on the invoke_agent span.
GEN_AI_EVALUATION_EVENT = "gen_ai.evaluation.result"
GEN_AI_EVALUATION_NAME = "gen_ai.evaluation.name"
GEN_AI_EVALUATION_SCORE_LABEL = "gen_ai.evaluation.score.label"
GEN_AI_EVALUATION_SCORE_VALUE = "gen_ai.evaluation.score.value"
GEN_AI_EVALUATION_EXPLANATION = "gen_ai.evaluation.explanation"
DSX_RULE_SEVERITY = "dsx.rule.severity"
DSX_RULE_VERSION = "dsx.rule.version"

# dsx attributes: identity.
DSX_JOB_ID = "dsx.job_id"
DSX_PARAMETER_ID = "dsx.parameter_id"
DSX_TENANT = "dsx.tenant"
DSX_RULE_SET_VERSION = "dsx.rule_set_version"
DSX_ROLE = "dsx.role"  # primary | cross_check
DSX_PHASE = "dsx.phase"  # extraction (production); evaluation adds e.g. "oracle"
DSX_ENGINE = "dsx.engine"  # agentic | single-pass
DSX_MODEL_ALIAS = "dsx.model_alias"
DSX_TOOL_SURFACE_VERSION = "dsx.tool_surface.version"

# dsx attributes: invoke_agent outcome.
DSX_OUTCOME = "dsx.outcome"  # submitted | submit_not_called | budget_exhausted | provider_error | timeout
DSX_TURNS = "dsx.turns"
DSX_ERROR_DETAIL = "dsx.error.detail"  # human sentence for a typed engine error

# Full inputs/outputs ride on the live span as JSON strings under these keys: the database exporter moves
# them into the stored ``payload`` (never truncated); exported OTLP attributes carry a truncated preview.
DSX_PAYLOAD_INPUT = "dsx.payload.input"
DSX_PAYLOAD_OUTPUT = "dsx.payload.output"

# dsx attributes: route_engine.
DSX_ROUTE_ENGINE = "dsx.route.engine"
DSX_ROUTE_REASON = "dsx.route.reason"
DSX_ROUTE_DOCUMENT_MODE = "dsx.route.document_mode"  # single-pass input: text | pdf | images

# dsx attributes: chat spans.
DSX_HTTP_STATUS = "dsx.http.status_code"
DSX_LLM_ATTEMPT = "dsx.llm.attempt"  # 1-based retry attempt of one logical turn
DSX_LLM_TURN = "dsx.llm.turn"  # 0-based turn index within the run
DSX_LLM_TOOL_CALLS = "dsx.llm.tool_call_count"
DSX_LLM_TOOL_REQUIRED = "dsx.llm.tool_required"  # bool: a tool call was required on this turn
DSX_LLM_REASONING_PRESENT = "dsx.llm.reasoning_present"  # bool
DSX_LLM_REASONING_EXPECTED = "dsx.llm.reasoning_expected"  # bool: the model is configured to reason
DSX_LLM_COST_USD = "dsx.llm.cost_usd"
DSX_LLM_ERROR_TYPE = "dsx.llm.error_type"  # provider error class, absent on success
DSX_LLM_OUTCOME = "dsx.llm.outcome"  # tool_call | text_only | empty | error
DSX_LLM_REQUEST_CHARS = "dsx.llm.request_chars"  # characters of the messages sent on this call
DSX_LLM_LATENCY_MS = "dsx.llm.latency_ms"  # provider round trip as seen by the client
# A capability the provider rejected (tool_choice | reasoning): this attempt was retried once without it.
DSX_LLM_CAPABILITY_REJECTED = "dsx.llm.capability_rejected"
DSX_LLM_WITHOUT = "dsx.llm.without"  # capabilities left out of this attempt after a rejection

# dsx attributes: what an LLM gateway (LiteLLM proxy) reported about a chat call (x-litellm-* headers).
DSX_GATEWAY_MODEL_ID = "dsx.gateway.model_id"
DSX_GATEWAY_MODEL_GROUP = "dsx.gateway.model_group"
DSX_GATEWAY_API_BASE = "dsx.gateway.api_base"
DSX_GATEWAY_ATTEMPTED_FALLBACKS = "dsx.gateway.attempted_fallbacks"
DSX_GATEWAY_ATTEMPTED_RETRIES = "dsx.gateway.attempted_retries"
DSX_GATEWAY_RESPONSE_COST = "dsx.gateway.response_cost_usd"
DSX_GATEWAY_CALL_ID = "dsx.gateway.call_id"
DSX_GATEWAY_OVERHEAD_MS = "dsx.gateway.overhead_ms"
DSX_GATEWAY_RESPONSE_MS = "dsx.gateway.response_ms"

# dsx attributes: execute_tool spans.
DSX_TOOL_OUTCOME = "dsx.tool.outcome"  # ok | error | empty
DSX_TOOL_ERROR_CODE = "dsx.tool.error_code"
DSX_TOOL_OUTPUT_CHARS = "dsx.tool.output_chars"

# Tool names of the production surface.
NAVIGATION_TOOLS = frozenset(
    {"build_datasheet", "get_section_text", "search_text", "extract_table_markdown", "inspect_page"}
)
CROSS_CHECK_TOOLS = frozenset({"search_text", "extract_table_markdown"})
SUBMIT_TOOL = "submit_extraction"
