"""Dispatch records built span by span, in the shape the agent loop writes them, for detector tests."""

from __future__ import annotations

import itertools
from typing import Any

from app.detectors.record import records_from_spans
from app.dispatch import semconv as sc

ANSWER = {"found": True, "values": [{"min": 2.7, "max": 5.5, "unit": "V", "conditions": []}], "source_page": 4,
          "quote": "Supply Voltage VDD 2.7 — 5.5 V", "confidence": 0.9}


class RunBuilder:
    """Spans of one invoke_agent run, written the way the agent loop records them."""

    def __init__(self, engine: str = "agentic", outcome: str = "submitted", reasoning_expected: bool | None = None,
                 trace_id: str = "a" * 32, role: str = "primary") -> None:
        self._ids = (f"{n:016x}" for n in itertools.count(1))
        self._clock = itertools.count(1_000, 1_000)
        self.trace_id = trace_id
        self.reasoning_expected = reasoning_expected
        self.turn_index = -1
        self.root = self._span(sc.SPAN_INVOKE_AGENT, None, {
            sc.GEN_AI_OPERATION: "invoke_agent", sc.DSX_ENGINE: engine, sc.DSX_OUTCOME: outcome,
            sc.DSX_ROLE: role, sc.GEN_AI_REQUEST_MODEL: "test/model"})
        self.spans = [self.root]

    def _span(self, name: str, parent: str | None, attributes: dict[str, Any], payload: dict | None = None,
              status: str = "UNSET") -> dict[str, Any]:
        start = next(self._clock)
        return {"trace_id": self.trace_id, "span_id": next(self._ids), "parent_span_id": parent, "name": name,
                "start_ns": start, "end_ns": start + 500, "status_code": status, "status_message": None,
                "attributes": attributes, "payload": payload or {}}

    def turn(self, tool_calls: int = 1, status: int = 200, outcome: str | None = None,
             reasoning: bool | None = None, required: bool | None = True) -> str:
        self.turn_index += 1
        attributes: dict[str, Any] = {
            sc.GEN_AI_OPERATION: "chat", sc.DSX_LLM_TURN: self.turn_index, sc.DSX_HTTP_STATUS: status,
            sc.DSX_LLM_TOOL_CALLS: tool_calls,
            sc.DSX_LLM_OUTCOME: outcome or ("tool_call" if tool_calls else "text_only"),
        }
        if required is not None:
            attributes[sc.DSX_LLM_TOOL_REQUIRED] = required
        if self.reasoning_expected is not None:
            attributes[sc.DSX_LLM_REASONING_EXPECTED] = self.reasoning_expected
            attributes[sc.DSX_LLM_REASONING_PRESENT] = bool(reasoning)
        if status >= 400:
            attributes[sc.DSX_LLM_ERROR_TYPE] = "APIError"
        span = self._span(sc.chat_span_name("test/model"), self.root["span_id"], attributes,
                          status="ERROR" if status >= 400 else "UNSET")
        self.spans.append(span)
        return span["span_id"]

    def tool(self, name: str, output: Any = None, outcome: str = "ok", error_code: str | None = None,
             arguments: dict | None = None) -> str:
        if output is None:
            output = {"hits": [{"page": 4, "text": "Supply Voltage VDD 2.7 — 5.5 V"}]} if outcome == "ok" else {}
        if error_code:
            output = {"error": {"code": error_code, "message": "failed"}}
        envelope = {"tool": name, "status": "error" if error_code else "ok", "untrusted_document_data": True,
                    "result": output}
        attributes = {sc.GEN_AI_OPERATION: "execute_tool", sc.GEN_AI_TOOL_NAME: name,
                      sc.DSX_LLM_TURN: self.turn_index, sc.DSX_TOOL_OUTCOME: outcome, sc.DSX_PHASE: "extraction"}
        if error_code:
            attributes[sc.DSX_TOOL_ERROR_CODE] = error_code
        span = self._span(sc.tool_span_name(name), self.root["span_id"], attributes,
                          {"input": arguments or {}, "output": envelope})
        self.spans.append(span)
        return span["span_id"]

    def navigate(self, *tools: str) -> RunBuilder:
        for name in tools:
            self.turn()
            self.tool(name)
        return self

    def submit(self, answer: dict | None = None) -> str:
        self.turn()
        return self.tool(sc.SUBMIT_TOOL, output={"accepted": True}, arguments=answer or ANSWER)

    def record(self):  # noqa: ANN201
        (record,) = records_from_spans(self.spans)
        return record
