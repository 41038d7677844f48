"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1, for driving real LiteLLM in tests.

Why a real HTTP server rather than a mocked client: the failures the dispatch record must catch live in
the transport (status codes, retries, timeouts, what a provider returns around a tool call), so the
tests go through LiteLLM's real OpenAI provider exactly as production would against a vLLM server.

Usage::

    with ScriptedLLM() as llm:
        llm.script(tool_call("search_text", {"query": "supply voltage"}),
                   error(429, headers={"Retry-After": "0"}),
                   submit({"found": False, "reason": "absent"}))
        model = llm.model_config()          # ModelConfig for "openai/scripted" at llm.base_url
        ... run the agent ...
        llm.requests                        # every request received, in order (parsed JSON bodies)

Standing in for a LiteLLM proxy, ``gateway_models`` is what ``GET .../model/info`` answers (entries of the
proxy's ``data`` list) and ``always_headers`` go on every reply (``x-litellm-*``).

Each request consumes the next scripted behaviour; when the script is exhausted the server answers
500 ``script_exhausted`` so that a test that under-scripts fails loudly instead of hanging. A behaviour
is a ``Behaviour`` (``status``, ``body``, ``headers``, ``delay_s``) or a callable taking the request
body and returning one, for policies that depend on what the agent sent (``dynamic``).
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from app.agent.registry import ModelConfig

_ids = itertools.count(1)


@dataclass
class Behaviour:
    """One scripted reply. ``delay_s`` is slept before answering (a slow or hanging provider)."""

    status: int = 200
    body: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    # Built per request when set (needs the request, e.g. to honour its max_tokens).
    build: Callable[[dict[str, Any]], dict[str, Any]] | None = None


Script = Behaviour | Callable[[dict[str, Any]], Behaviour]


@dataclass
class ReceivedRequest:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    received_at: float

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages", []))

    @property
    def tool_names(self) -> list[str]:
        return [t["function"]["name"] for t in self.body.get("tools", []) or []]


def _approx_tokens(value: Any) -> int:
    return max(1, len(json.dumps(value)) // 4)


def completion_body(
    message: dict[str, Any], finish_reason: str, *, model: str = "scripted", prompt_tokens: int = 100,
    completion_tokens: int | None = None,
) -> dict[str, Any]:
    """A chat.completion response body around one assistant message."""
    return {
        "id": f"chatcmpl-{next(_ids)}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens if completion_tokens is not None else _approx_tokens(message),
            "total_tokens": prompt_tokens + (completion_tokens or _approx_tokens(message)),
        },
    }


def _message(content: str | None, tool_calls: list[dict[str, Any]] | None, reasoning: str | None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    if reasoning is not None:
        message["reasoning_content"] = reasoning
    return message


def tool_calls(calls: list[tuple[str, dict[str, Any] | str]], *, reasoning: str | None = None,
               content: str | None = None, delay_s: float = 0.0) -> Behaviour:
    """200 with one or more tool calls; string arguments are sent verbatim (for malformed JSON)."""
    raw = [
        {
            "id": f"call_{next(_ids)}",
            "type": "function",
            "function": {"name": name, "arguments": args if isinstance(args, str) else json.dumps(args)},
        }
        for name, args in calls
    ]
    return Behaviour(body=completion_body(_message(content, raw, reasoning), "tool_calls"), delay_s=delay_s)


def tool_call(name: str, arguments: dict[str, Any] | str | None = None, *, reasoning: str | None = None,
              delay_s: float = 0.0) -> Behaviour:
    """200 with a single proper tool call."""
    return tool_calls([(name, {} if arguments is None else arguments)], reasoning=reasoning, delay_s=delay_s)


def submit(arguments: dict[str, Any] | str, *, reasoning: str | None = None, delay_s: float = 0.0) -> Behaviour:
    """200 with a ``submit_extraction`` call."""
    return tool_call("submit_extraction", arguments, reasoning=reasoning, delay_s=delay_s)


def malformed_tool_call(name: str, raw_arguments: str = '{"query": "supply voltage",') -> Behaviour:
    """200 with a tool call whose arguments are not valid JSON."""
    return tool_call(name, raw_arguments)


def text(content: str, *, reasoning: str | None = None, finish_reason: str = "stop", delay_s: float = 0.0) -> Behaviour:
    """200 with text and no tool call (the silent failure: a fluent answer that read nothing)."""
    return Behaviour(body=completion_body(_message(content, None, reasoning), finish_reason), delay_s=delay_s)


def error(status: int, message: str = "scripted error", *, headers: dict[str, str] | None = None,
          error_type: str | None = None) -> Behaviour:
    """An HTTP error with an OpenAI-style error body (429 rate limit, 5xx, 400 ...)."""
    body = {"error": {"message": message, "type": error_type or f"http_{status}", "code": str(status)}}
    return Behaviour(status=status, body=body, headers=dict(headers or {}))


def hang(seconds: float) -> Behaviour:
    """Sleep ``seconds`` before a (late) reply: longer than the client's timeout, it is a hang."""
    return Behaviour(body=completion_body(_message("too late", None, None), "stop"), delay_s=seconds)


def repeat_token(token: str = "<tool_call>", *, tokens_per_repeat: int = 1,
                 default_max_tokens: int = 4096) -> Behaviour:
    """A tool-call delimiter repeated until the request's output limit, ``finish_reason=length``, HTTP 200."""

    def build(request: dict[str, Any]) -> dict[str, Any]:
        limit = int(request.get("max_tokens") or request.get("max_completion_tokens") or default_max_tokens)
        repeats = max(1, limit // tokens_per_repeat)
        return completion_body(_message(token * repeats, None, None), "length", completion_tokens=limit)

    return Behaviour(build=build)


def dynamic(policy: Callable[[dict[str, Any]], Behaviour]) -> Callable[[dict[str, Any]], Behaviour]:
    """A behaviour chosen from the request body (an agent policy that reads the tool results)."""
    return policy


class ScriptedLLM:
    """The server. Thread-safe; start/stop via the context manager or ``start()``/``stop()``."""

    def __init__(self, model_name: str = "scripted") -> None:
        self.model_name = model_name
        self._script: deque[Script] = deque()
        self._repeat: Script | None = None
        self._lock = threading.Lock()
        self.requests: list[ReceivedRequest] = []
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._closing = threading.Event()
        self.gateway_models: list[dict[str, Any]] = []
        self.always_headers: dict[str, str] = {}
        self.info_requests: list[ReceivedRequest] = []

    # -- scripting ---------------------------------------------------------------------------------
    def script(self, *behaviours: Script) -> ScriptedLLM:
        """Append behaviours, consumed one per request in order."""
        with self._lock:
            self._script.extend(behaviours)
        return self

    def always(self, behaviour: Script | None) -> ScriptedLLM:
        """Answer every request past the script with ``behaviour`` (a policy for long runs, benchmarks)."""
        self._repeat = behaviour
        return self

    def reset(self) -> None:
        with self._lock:
            self._script.clear()
            self.requests.clear()
            self._repeat = None

    @property
    def remaining(self) -> int:
        return len(self._script)

    # -- server ------------------------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        assert self._server is not None, "server not started"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def model_config(self, alias: str = "scripted", **model_info: Any) -> ModelConfig:
        """A ModelConfig that reaches this server through LiteLLM's OpenAI provider."""
        return ModelConfig(
            alias=alias,
            litellm_params={"model": f"openai/{self.model_name}", "api_base": self.base_url, "api_key": "sk-test"},
            model_info=dict(model_info),
        )

    def models_file_entry(self, alias: str = "scripted", **model_info: Any) -> dict[str, Any]:
        """The same, as an entry of a LiteLLM ``model_list`` YAML (for DSX_MODELS_FILE)."""
        config = self.model_config(alias, **model_info)
        return {"model_name": alias, "litellm_params": config.litellm_params, "model_info": config.model_info}

    def start(self) -> ScriptedLLM:
        server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        server.daemon_threads = True
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, name="scripted-llm", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._closing.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> ScriptedLLM:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- request handling --------------------------------------------------------------------------
    def _next(self, body: dict[str, Any]) -> Behaviour:
        with self._lock:
            item = self._script.popleft() if self._script else self._repeat
        if item is None:
            return error(500, "script exhausted: no behaviour left for this request", error_type="script_exhausted")
        return item(body) if callable(item) else item

    def _sleep(self, seconds: float) -> None:
        self._closing.wait(seconds)


def _handler_for(llm: ScriptedLLM) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:  # keep test output clean
            return

        def do_GET(self) -> None:  # noqa: N802 - http.server naming
            if self.path.rstrip("/").endswith("/model/info"):
                with llm._lock:
                    llm.info_requests.append(ReceivedRequest(self.path, {k.lower(): v for k, v in self.headers.items()},
                                                             {}, time.time()))
                self._send(200, {"data": llm.gateway_models}, {})
                return
            self._send(200, {"object": "list", "data": [{"id": llm.model_name, "object": "model"}]}, {})

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b"{}"
            try:
                body = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                body = {"_unparsed": raw.decode("utf-8", "replace")}
            with llm._lock:
                llm.requests.append(ReceivedRequest(self.path, {k.lower(): v for k, v in self.headers.items()}, body,
                                                    time.time()))
            behaviour = llm._next(body)
            if behaviour.delay_s:
                llm._sleep(behaviour.delay_s)
            payload = behaviour.build(body) if behaviour.build else behaviour.body
            try:
                self._send(behaviour.status, payload or {}, {**llm.always_headers, **behaviour.headers})
            except (BrokenPipeError, ConnectionResetError):
                return  # the client gave up (a timeout): that is the point of a hang

        def _send(self, status: int, payload: dict[str, Any], headers: dict[str, str]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for key, value in headers.items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(data)

    return Handler


@pytest.fixture
def scripted_llm() -> Iterator[ScriptedLLM]:
    """A running scripted server (import this fixture into a test module, or list the module in
    ``pytest_plugins``)."""
    with ScriptedLLM() as llm:
        yield llm
