"""Reading the conversation the reader is given: the request, the tools offered, and what the tools said.

The reader decides every step from the messages alone, as any hosted model would: the
``<parameter_request>`` JSON in the user message, an optional ``<document>`` block (single-pass), the tool
schemas offered, and the tool result envelopes paired with the calls that produced them.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from app.agent.schemas import ParameterRequest

_REQUEST_RE = re.compile(r"<parameter_request>\s*(\{.*?\})\s*</parameter_request>", re.DOTALL)
_DOCUMENT_RE = re.compile(r"<document[^>]*>(.*?)</document>", re.DOTALL)


@dataclass
class ToolExchange:
    """One tool call the reader made and the envelope that came back (None while unanswered)."""

    call_id: str
    name: str
    arguments: dict[str, Any]
    status: str | None = None
    result: dict[str, Any] | None = None

    @property
    def ok(self) -> bool:
        return self.status == "ok" and isinstance(self.result, dict) and "error" not in self.result


@dataclass
class Conversation:
    request: ParameterRequest | None
    offered: list[str]
    document_text: str | None
    exchanges: list[ToolExchange] = field(default_factory=list)
    prompt_chars: int = 0

    def calls(self, name: str) -> list[ToolExchange]:
        return [e for e in self.exchanges if e.name == name]

    def offers(self, name: str) -> bool:
        return name in self.offered


def _get(obj: Any, key: str, default: Any = None) -> Any:
    if isinstance(obj, dict):
        return obj.get(key, default)
    return getattr(obj, key, default)


def _text_of(content: Any) -> str:
    """Message content as text, whether a string or a list of content parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(_get(part, "text", "") or "") for part in content)
    return str(content)


def tool_names(tools: Any) -> list[str]:
    names: list[str] = []
    for tool in tools or []:
        function = _get(tool, "function")
        name = _get(function, "name") if function is not None else _get(tool, "name")
        if name:
            names.append(str(name))
    return names


def parse_conversation(messages: list[Any], tools: Any) -> Conversation:
    request: ParameterRequest | None = None
    document: str | None = None
    by_id: dict[str, ToolExchange] = {}
    order: list[ToolExchange] = []
    chars = 0
    for message in messages:
        role = _get(message, "role")
        text = _text_of(_get(message, "content"))
        chars += len(text)
        if role == "user":
            match = _REQUEST_RE.search(text)
            if match and request is None:
                try:
                    request = ParameterRequest.model_validate(json.loads(match.group(1)))
                except (ValueError, TypeError):
                    request = None
            doc = _DOCUMENT_RE.search(text)
            if doc and document is None:
                document = doc.group(1)
        elif role == "assistant":
            for call in _get(message, "tool_calls") or []:
                function = _get(call, "function")
                raw_args = _get(function, "arguments") or "{}"
                chars += len(str(raw_args))
                try:
                    args = json.loads(raw_args) if isinstance(raw_args, str) else dict(raw_args)
                except ValueError:
                    args = {}
                exchange = ToolExchange(str(_get(call, "id")), str(_get(function, "name")), args or {})
                by_id[exchange.call_id] = exchange
                order.append(exchange)
        elif role == "tool":
            exchange = by_id.get(str(_get(message, "tool_call_id")))
            if exchange is None:
                continue
            try:
                envelope = json.loads(text)
            except ValueError:
                exchange.status, exchange.result = "error", {"error": {"code": "unreadable", "message": text[:200]}}
                continue
            if isinstance(envelope, dict) and "result" in envelope:
                exchange.status = str(envelope.get("status", "ok"))
                exchange.result = envelope.get("result") if isinstance(envelope.get("result"), dict) else {}
            else:
                exchange.status, exchange.result = "ok", envelope if isinstance(envelope, dict) else {}
    return Conversation(request, tool_names(tools), document, order, chars)
