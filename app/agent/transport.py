"""The only module that calls LiteLLM: one chat-completion attempt, and what the model can do.

``chat()`` makes exactly one attempt (LiteLLM's and the OpenAI SDK's own retries are switched off, so
every attempt the loop makes is one request it can record) and returns everything the dispatch record
needs: HTTP status, finish reasons, raw and parsed tool calls, reasoning, usage, cost, latency. Failures
become ``ProviderCallError`` carrying the HTTP status, the provider's error class and whether a retry can
help (429, 5xx, timeouts, dropped connections).

Provider quirks handled here and nowhere else:

* ``response_format`` is never sent together with tools, even if a model's configuration carries one: on
  guided-decoding backends the schema becomes a token mask that can forbid the tool-call token, and the
  model then answers from memory with HTTP 200.
* ``tool_choice="required"`` only where the provider supports it; a provider that rejects a capability dsx
  assumed (``tool_choice``, reasoning parameters) is recognised by ``rejected_capability`` so the loop can retry
  once without it.
* A LiteLLM proxy (``DSX_GATEWAY_URL``) serves pass-through aliases as ``litellm_proxy/ALIAS``; what each call
  tells it and what it reports back is ``app.agent.gateway``'s business.
* Every call but the offline reader's carries the current span as a W3C ``traceparent`` header.
* The offline reader is a LiteLLM custom provider registered on first use, so it crosses this exact path.
"""

from __future__ import annotations

import json
import os
import threading
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # never fetch the cost map from the network

import litellm  # noqa: E402

from app.agent import gateway  # noqa: E402
from app.agent.registry import ModelConfig  # noqa: E402
from app.config import get_settings  # noqa: E402
from app.dispatch import propagation, semconv  # noqa: E402

litellm.suppress_debug_info = True

DEFAULT_CONTEXT_WINDOW = 32_000  # tokens, when neither the configuration nor LiteLLM knows the model
DEFAULT_MAX_PDF_PAGES = 100  # the strictest common provider page cap for native PDF input

_offline_lock = threading.Lock()
_offline_registered = False


# --- Capabilities ------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Capabilities:
    """What a configured model can take. ``sources`` says where each figure came from (config, litellm,
    default), so a routing decision can explain itself."""

    context_window: int
    max_pdf_pages: int
    pdf_input: bool
    vision: bool
    reasoning_expected: bool
    tool_choice: bool
    max_output_tokens: int
    sources: dict[str, str] = field(default_factory=dict)


def _litellm_info(model: str) -> dict[str, Any]:
    try:
        return dict(litellm.get_model_info(model))
    except Exception:  # noqa: BLE001 - unknown to LiteLLM's model map: fall back to configuration/defaults
        return {}


def capabilities(model: ModelConfig) -> Capabilities:
    """The model's limits and features: explicit ``model_info`` in the models file first (it describes this
    deployment, e.g. a vLLM server started with a smaller context), then LiteLLM's model map, then
    conservative defaults."""
    configured = model.model_info
    via_gateway = gateway.routes_through_gateway(model)
    if model.is_offline:
        known: dict[str, Any] = {}
    elif via_gateway:
        known = gateway.model_info(model.alias)
    else:
        known = _litellm_info(model.litellm_model)
    known_source = "gateway" if via_gateway else "litellm"
    sources: dict[str, str] = {}

    def pick(name: str, config_keys: tuple[str, ...], litellm_keys: tuple[str, ...], default: Any) -> Any:
        for key in config_keys:
            if configured.get(key) is not None:
                sources[name] = "config"
                return configured[key]
        for key in litellm_keys:
            if known.get(key) is not None:
                sources[name] = known_source
                return known[key]
        sources[name] = "default"
        return default

    settings = get_settings()
    reasoning_configured = "reasoning_effort" in model.litellm_params or "thinking" in model.litellm_params
    backing = ModelConfig(model.alias, {"model": known["litellm_model"]}) if known.get("litellm_model") else model
    tool_choice_default = _supports_param(backing, "tool_choice")
    return Capabilities(
        context_window=int(pick("context_window", ("context_window", "max_input_tokens"), ("max_input_tokens",),
                                DEFAULT_CONTEXT_WINDOW)),
        max_pdf_pages=int(pick("max_pdf_pages", ("max_pdf_pages",), ("max_pdf_pages",), DEFAULT_MAX_PDF_PAGES)),
        pdf_input=bool(pick("pdf_input", ("supports_pdf_input",), ("supports_pdf_input",), False)),
        vision=bool(pick("vision", ("supports_vision",), ("supports_vision",), False)),
        reasoning_expected=bool(pick("reasoning", ("reasoning",), (), False)) or (
            reasoning_configured and bool(known.get("supports_reasoning"))
        ),
        tool_choice=bool(pick("tool_choice", ("supports_tool_choice",), ("supports_tool_choice",),
                              tool_choice_default)),
        # The per-call output cap: the model's own limit bounded by Settings, unless the models file sets
        # one for this deployment (a reasoning model may need more room than the default).
        max_output_tokens=int(configured["max_output_tokens"]) if configured.get("max_output_tokens") else int(min(
            pick("max_output_tokens", (), ("max_output_tokens",), settings.llm_max_output_tokens),
            settings.llm_max_output_tokens,
        )),
        sources=sources,
    )


def requested_model_name(model: ModelConfig) -> str:
    """The model as requested, without a LiteLLM provider prefix: the alias for a gateway call,
    ``gpt-4o`` for ``openai/gpt-4o`` (the span name carries it)."""
    if gateway.routes_through_gateway(model):
        return model.alias
    return model.litellm_model.split("/", 1)[1] if "/" in model.litellm_model else model.litellm_model


@dataclass(frozen=True)
class Endpoint:
    """Who serves a model's calls, in GenAI semantic-convention terms."""

    provider: str  # gen_ai.provider.name
    address: str | None = None  # server.address
    port: int | None = None  # server.port


def endpoint(model: ModelConfig) -> Endpoint:
    """The provider and server of ``model``'s calls (address and port only where an ``api_base`` or the
    gateway URL names them)."""
    if model.is_offline:
        return Endpoint("dsx.offline")
    if gateway.routes_through_gateway(model):
        provider, base = "litellm_proxy", get_settings().gateway_url
    else:
        try:
            provider = str(litellm.get_llm_provider(model.litellm_model)[1])
        except Exception:  # noqa: BLE001 - a model string LiteLLM cannot place
            provider = model.litellm_model.split("/", 1)[0] if "/" in model.litellm_model else "unknown"
        base = model.litellm_params.get("api_base")
    if not base:
        return Endpoint(provider)
    parsed = urlsplit(str(base))
    port = parsed.port or {"https": 443, "http": 80}.get(parsed.scheme)
    return Endpoint(provider, parsed.hostname, port)


def _supports_param(model: ModelConfig, param: str) -> bool:
    if model.is_offline:
        return True
    try:
        name, provider, _, _ = litellm.get_llm_provider(model.litellm_model)
        return param in (litellm.get_supported_openai_params(model=name, custom_llm_provider=provider) or [])
    except Exception:  # noqa: BLE001 - an unknown provider: do not force what it may reject
        return False


# --- One call ----------------------------------------------------------------------------------------------

@dataclass
class ToolCall:
    id: str
    name: str
    arguments: str  # raw, as the model produced it


@dataclass
class ChatResult:
    http_status: int
    finish_reasons: list[str]
    content: str | None
    tool_calls: list[ToolCall]
    reasoning: str | None
    input_tokens: int
    output_tokens: int
    cost_usd: float
    latency_ms: float
    response_model: str | None
    assistant_message: dict[str, Any]  # to append to the conversation
    raw: dict[str, Any]
    gateway: dict[str, Any] = field(default_factory=dict)  # x-litellm-* headers as span attributes

    @property
    def outcome(self) -> str:
        """tool_call | text_only | empty (the ``dsx.llm.outcome`` of a successful call)."""
        if self.tool_calls:
            return "tool_call"
        return "text_only" if (self.content or "").strip() else "empty"


class ProviderCallError(Exception):
    """One failed attempt. ``retryable``: a later attempt may succeed (429, 5xx, timeout, connection)."""

    def __init__(self, message: str, *, error_type: str, http_status: int | None, retryable: bool,
                 timed_out: bool = False, retry_after_s: float | None = None, latency_ms: float = 0.0) -> None:
        super().__init__(message)
        self.error_type = error_type
        self.http_status = http_status
        self.retryable = retryable
        self.timed_out = timed_out
        self.retry_after_s = retry_after_s
        self.latency_ms = latency_ms


def _ensure_offline_registered() -> None:
    global _offline_registered
    if _offline_registered:
        return
    with _offline_lock:
        if not _offline_registered:
            from app.agent import offline

            offline.register()
            _offline_registered = True


def _resolve_secret(value: Any) -> Any:
    """LiteLLM-style ``os.environ/NAME`` references in a models file, resolved by LiteLLM itself."""
    if isinstance(value, str) and value.startswith("os.environ/"):
        return litellm.get_secret_str(value)
    return value


# Capabilities a provider may reject, and the request parameters that assume each one.
TOOL_CHOICE = "tool_choice"
REASONING = "reasoning"
_REASONING_PARAMS = ("reasoning_effort", "thinking", "reasoning")
# Where an operator records that a model lacks the capability (DSX_MODELS_FILE).
CAPABILITY_SETTINGS = {
    TOOL_CHOICE: "model_info.supports_tool_choice: false",
    REASONING: "no reasoning_effort/thinking in litellm_params (and model_info.reasoning: false)",
}


def call_arguments(model: ModelConfig, *, messages: list[dict[str, Any]], tools: list[dict[str, Any]],
                   tool_choice: str | None, timeout_s: float, max_tokens: int,
                   identity: dict[str, Any] | None = None, without: frozenset[str] = frozenset()) -> dict[str, Any]:
    """The keyword arguments of ``litellm.completion`` for one attempt (secrets resolved). ``identity`` is the
    run's span identity (tenant, job, parameter, engine), ``without`` the capabilities to leave out."""
    identity = identity or {}
    params = {k: _resolve_secret(v) for k, v in model.litellm_params.items()}
    if gateway.routes_through_gateway(model):
        params["model"] = f"litellm_proxy/{model.alias}"
        params["api_base"] = get_settings().gateway_url
        key = gateway.key_for(identity.get(semconv.DSX_TENANT))
        if key:
            params["api_key"] = key
        params.update(gateway.request_fields(identity))
    if not model.is_offline:
        trace_headers = propagation.current_headers()
        if trace_headers:
            params["extra_headers"] = {**(params.get("extra_headers") or {}), **trace_headers}
    if REASONING in without:
        for name in _REASONING_PARAMS:
            params.pop(name, None)
    if TOOL_CHOICE in without:
        tool_choice = None
    if tools:
        params.pop("response_format", None)
        params["tools"] = tools
        if tool_choice:
            params["tool_choice"] = tool_choice
    params.update(messages=messages, timeout=timeout_s, max_tokens=max_tokens, num_retries=0, max_retries=0,
                  stream=False)
    return params


def rejected_capability(exc: ProviderCallError, *, tool_choice_sent: bool, reasoning_sent: bool) -> str | None:
    """The capability a failed call was refused over, when the provider says so: an HTTP 400/422/500 whose
    message names ``tool_choice`` (llama-cpp-python's function-calling format answers 500) or a reasoning
    parameter that was sent."""
    if exc.http_status not in (400, 422, 500):
        return None
    message = str(exc).lower()
    if tool_choice_sent and "tool_choice" in message:
        return TOOL_CHOICE
    if reasoning_sent and any(word in message for word in ("reasoning", "thinking")):
        return REASONING
    return None


def sends_reasoning_params(model: ModelConfig) -> bool:
    return any(name in model.litellm_params for name in _REASONING_PARAMS)


def _retry_after(exc: Exception) -> float | None:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None) or getattr(exc, "litellm_response_headers", None) or {}
    try:
        value = headers.get("retry-after")
        return max(0.0, float(value)) if value is not None else None
    except (TypeError, ValueError, AttributeError):
        return None


def classify(exc: Exception, latency_ms: float) -> ProviderCallError:
    """A LiteLLM/OpenAI exception as a ``ProviderCallError``."""
    status = getattr(exc, "status_code", None)
    status = int(status) if isinstance(status, int | str) and str(status).isdigit() else None
    timed_out = isinstance(exc, litellm.Timeout) or "timeout" in type(exc).__name__.lower()
    connection = isinstance(exc, litellm.APIConnectionError) and not timed_out
    retryable = timed_out or connection or status in (408, 409, 429) or (status is not None and status >= 500)
    return ProviderCallError(
        str(exc)[:2000], error_type=type(exc).__name__, http_status=status, retryable=retryable,
        timed_out=timed_out, retry_after_s=_retry_after(exc), latency_ms=latency_ms,
    )


def _reasoning(message: Any) -> str | None:
    text = getattr(message, "reasoning_content", None)
    if text:
        return str(text)
    blocks = getattr(message, "thinking_blocks", None) or []
    joined = "\n".join(str(b.get("thinking", "")) for b in blocks if isinstance(b, dict) and b.get("thinking"))
    if joined:
        return joined
    extra = getattr(message, "provider_specific_fields", None) or {}
    for key in ("reasoning", "reasoning_content"):
        if extra.get(key):
            return str(extra[key])
    return None


def _cost(model: ModelConfig, response: Any, input_tokens: int, output_tokens: int) -> float:
    if model.is_offline:
        return 0.0  # the built-in reader runs locally; LiteLLM's price lookup would only cost time per turn
    info = model.model_info
    if info.get("input_cost_per_token") is not None or info.get("output_cost_per_token") is not None:
        return (input_tokens * float(info.get("input_cost_per_token") or 0)
                + output_tokens * float(info.get("output_cost_per_token") or 0))
    hidden = getattr(response, "_hidden_params", {}) or {}
    if hidden.get("response_cost") is not None:  # a gateway's x-litellm-response-cost lands here too
        return float(hidden["response_cost"])
    try:
        return float(litellm.completion_cost(completion_response=response))
    except Exception:  # noqa: BLE001 - model not in the price map: cost unknown, recorded as 0
        return 0.0


def parse_response(model: ModelConfig, response: Any, latency_ms: float) -> ChatResult:
    choices = list(getattr(response, "choices", None) or [])
    message = choices[0].message if choices else None
    calls: list[ToolCall] = []
    raw_calls: list[dict[str, Any]] = []
    for position, call in enumerate(getattr(message, "tool_calls", None) or []):
        function = getattr(call, "function", None)
        name = str(getattr(function, "name", "") or "")
        arguments = getattr(function, "arguments", "")
        arguments = arguments if isinstance(arguments, str) else json.dumps(arguments)
        call_id = str(getattr(call, "id", None) or f"call_{int(time.time() * 1000)}_{position}")
        calls.append(ToolCall(call_id, name, arguments))
        raw_calls.append({"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}})
    content = getattr(message, "content", None) if message is not None else None
    usage = getattr(response, "usage", None)
    input_tokens = int(getattr(usage, "prompt_tokens", 0) or 0)
    output_tokens = int(getattr(usage, "completion_tokens", 0) or 0)
    assistant: dict[str, Any] = {"role": "assistant", "content": content}
    if raw_calls:
        assistant["tool_calls"] = raw_calls
    thinking = getattr(message, "thinking_blocks", None)
    if thinking:
        assistant["thinking_blocks"] = thinking  # providers that reason across tool calls need them back
    try:
        raw = response.model_dump()
    except Exception:  # noqa: BLE001 - a custom provider's response object
        raw = {"repr": repr(response)}
    hidden = getattr(response, "_hidden_params", None) or {}
    return ChatResult(
        http_status=200,
        finish_reasons=[str(c.finish_reason) for c in choices if getattr(c, "finish_reason", None)],
        content=content if isinstance(content, str) else (None if content is None else str(content)),
        tool_calls=calls,
        reasoning=_reasoning(message) if message is not None else None,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        cost_usd=_cost(model, response, input_tokens, output_tokens),
        latency_ms=latency_ms,
        response_model=getattr(response, "model", None),
        assistant_message=assistant,
        raw=raw,
        gateway=gateway.response_attributes(hidden.get("additional_headers") if isinstance(hidden, dict) else None),
    )


def chat(model: ModelConfig, *, messages: list[dict[str, Any]], tools: list[dict[str, Any]],
         tool_choice: str | None, timeout_s: float, max_tokens: int, identity: dict[str, Any] | None = None,
         without: frozenset[str] = frozenset()) -> ChatResult:
    """One chat-completion attempt; raises ``ProviderCallError``."""
    if model.is_offline:
        try:
            _ensure_offline_registered()
        except ImportError as exc:
            raise ProviderCallError(f"offline reader unavailable: {exc}", error_type="OfflineUnavailable",
                                    http_status=None, retryable=False) from exc
    kwargs = call_arguments(model, messages=messages, tools=tools, tool_choice=tool_choice,
                            timeout_s=timeout_s, max_tokens=max_tokens, identity=identity, without=without)
    started = time.perf_counter()
    try:
        response = litellm.completion(**kwargs)
    except Exception as exc:  # noqa: BLE001 - every provider failure is classified and recorded
        raise classify(exc, (time.perf_counter() - started) * 1000) from exc
    return parse_response(model, response, (time.perf_counter() - started) * 1000)
