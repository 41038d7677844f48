"""The agent loop through real LiteLLM against the scripted server: each provider behaviour ends in the right
outcome and leaves the right spans in the database."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from app.agent import engines
from app.agent.phases import Phase, extraction_phase
from app.agent.schemas import EngineOutcome, ParameterRequest, RunContext
from app.agent.tools import ToolSpec
from app.config import reset_settings
from app.db import session_scope
from app.dispatch import semconv, service, telemetry
from app.dispatch.models import SpanRecord
from app.documents.index import DatasheetIndex
from tests.support.documents import ANSWER, PAGES, SEARCH_RESULT, FixedToolRunner, make_index
from tests.support.scripted_llm import (
    ScriptedLLM,
    error,
    hang,
    malformed_tool_call,
    repeat_token,
    scripted_llm,  # noqa: F401 - fixture
    submit,
    text,
    tool_call,
)

HANG_S = 30.0  # a scripted call that hangs this long: timeouts must end a run in a fraction of it

@pytest.fixture
def env(dsx_env, monkeypatch: pytest.MonkeyPatch):  # noqa: ANN001, ANN201
    """Fast backoff; individual tests tighten budgets with ``configure``."""
    monkeypatch.setenv("DSX_LLM_BACKOFF_S", "0.01")
    monkeypatch.setenv("DSX_LLM_BACKOFF_MAX_S", "0.05")
    reset_settings()
    yield monkeypatch
    telemetry.flush()  # into this test's database, before it goes away


def configure(monkeypatch: pytest.MonkeyPatch, **values: object) -> None:
    for key, value in values.items():
        monkeypatch.setenv(f"DSX_{key.upper()}", str(value))
    reset_settings()


def run(llm: ScriptedLLM, *, engine: str = "agentic", tool_runner: Any = None, phases: list[Phase] | None = None,
        request: ParameterRequest | None = None, index: DatasheetIndex | None = None,
        **model_info: Any) -> EngineOutcome:
    return engines.run_parameter(
        index=index or make_index(), request=request or ParameterRequest(name="Supply voltage", unit="V"),
        model=llm.model_config(**model_info), engine=engine,
        context=RunContext(job_id="job-1", parameter_id=3), phases=phases,
        tool_runner=tool_runner if tool_runner is not None else FixedToolRunner(),
    )


def spans_of(outcome: EngineOutcome) -> list[SpanRecord]:
    telemetry.flush()
    with session_scope() as session:
        return service.load_trace(session, outcome.trace_id)


def by_kind(spans: list[SpanRecord]) -> tuple[SpanRecord, list[SpanRecord], list[SpanRecord]]:
    (root,) = [s for s in spans if s.name == semconv.SPAN_INVOKE_AGENT]
    chats = [s for s in spans if s.name.startswith("chat ")]
    tools = [s for s in spans if s.name.startswith("execute_tool ")]
    return root, chats, tools


def test_proper_tool_calls_end_submitted_with_the_full_record(env, scripted_llm: ScriptedLLM) -> None:  # noqa: ANN001, F811
    scripted_llm.script(tool_call("build_datasheet"), tool_call("search_text", {"query": "supply voltage"}),
                        submit(ANSWER))
    tool_runner = FixedToolRunner()
    outcome = run(scripted_llm, tool_runner=tool_runner)

    assert outcome.error_code is None and outcome.extraction is not None
    assert outcome.extraction.values[0].max == 5.5 and outcome.engine == "agentic" and outcome.model == "scripted"
    assert tool_runner.calls == [("build_datasheet", {}), ("search_text", {"query": "supply voltage",
                                                                          "max_hits": 10})]
    spans = spans_of(outcome)
    root, chats, tools = by_kind(spans)
    assert root.span_id == outcome.root_span_id and root.parent_span_id is None
    assert all(s.parent_span_id == root.span_id for s in spans if s is not root)
    assert root.attributes[semconv.DSX_OUTCOME] == "submitted"
    assert root.attributes[semconv.DSX_ENGINE] == "agentic" and root.attributes[semconv.DSX_TURNS] == 3
    assert root.job_id == "job-1" and root.parameter_id == 3 and root.attributes[semconv.DSX_ROLE] == "primary"
    assert [s.name for s in spans if s.name == semconv.SPAN_ROUTE] == [semconv.SPAN_ROUTE]
    assert [c.attributes[semconv.DSX_LLM_TURN] for c in chats] == [0, 1, 2]
    for chat in chats:
        a = chat.attributes
        assert chat.name == "chat scripted"
        assert a[semconv.DSX_HTTP_STATUS] == 200 and a[semconv.DSX_LLM_OUTCOME] == "tool_call"
        assert a[semconv.DSX_LLM_TOOL_CALLS] == 1 and a[semconv.GEN_AI_FINISH_REASONS] == ["tool_calls"]
        assert a[semconv.GEN_AI_INPUT_TOKENS] == 100 and a[semconv.GEN_AI_OUTPUT_TOKENS] > 0
        assert a[semconv.DSX_LLM_ATTEMPT] == 1 and a[semconv.DSX_MODEL_ALIAS] == "scripted"
        assert a[semconv.DSX_LLM_COST_USD] == 0.0  # not in LiteLLM's price map: unknown cost is 0
    assert [t.attributes[semconv.GEN_AI_TOOL_NAME] for t in tools] == ["build_datasheet", "search_text",
                                                                       "submit_extraction"]
    assert all(t.attributes[semconv.DSX_TOOL_OUTCOME] == "ok" for t in tools)
    search = tools[1]
    assert search.payload["input"]["arguments"] == {"query": "supply voltage", "max_hits": 10}
    assert search.payload["output"] == {"tool": "search_text", "status": "ok", "untrusted_document_data": True,
                                        "result": SEARCH_RESULT}
    assert tools[2].payload["input"]["arguments"]["quote"] == ANSWER["quote"]

    requests = scripted_llm.requests
    assert len(requests) == 3
    assert all(r.body.get("tool_choice") == "required" and "response_format" not in r.body for r in requests)
    assert requests[0].tool_names == ["build_datasheet", "get_section_text", "search_text",
                                      "extract_table_markdown", "inspect_page", "submit_extraction"]
    tool_message = requests[2].messages[-1]
    assert tool_message["role"] == "tool" and json.loads(tool_message["content"]) == search.payload["output"]
    assert tool_message["tool_call_id"] == search.attributes[semconv.GEN_AI_TOOL_CALL_ID]


def test_text_without_tool_call_is_recorded_nudged_once_then_submit_not_called(env, scripted_llm) -> None:  # noqa: ANN001, F811
    scripted_llm.script(text("The supply voltage is 3.3 V."), text("It is 3.3 V, from the datasheet."))
    outcome = run(scripted_llm)

    assert outcome.error_code == "submit_not_called" and outcome.extraction is None
    root, chats, tools = by_kind(spans_of(outcome))
    assert tools == [] and root.attributes[semconv.DSX_OUTCOME] == "submit_not_called"
    assert root.status_code == "ERROR"
    for chat in chats:
        a = chat.attributes
        assert a[semconv.DSX_HTTP_STATUS] == 200 and a[semconv.DSX_LLM_TOOL_CALLS] == 0
        assert a[semconv.DSX_LLM_OUTCOME] == "text_only" and a[semconv.DSX_LLM_TOOL_REQUIRED] is True
    assert len(chats) == 2 and len(scripted_llm.requests) == 2
    nudge = scripted_llm.requests[1].messages[-1]
    assert nudge["role"] == "user" and "no tool call" in nudge["content"]


def test_one_nudge_can_recover_a_run(env, scripted_llm) -> None:  # noqa: ANN001, F811
    scripted_llm.script(text(""), submit(ANSWER))
    outcome = run(scripted_llm)
    assert outcome.error_code is None and outcome.extraction is not None
    _, chats, _ = by_kind(spans_of(outcome))
    assert [c.attributes[semconv.DSX_LLM_OUTCOME] for c in chats] == ["empty", "tool_call"]


def test_malformed_arguments_come_back_as_a_structured_tool_error(env, scripted_llm) -> None:  # noqa: ANN001, F811
    scripted_llm.script(malformed_tool_call("search_text"), tool_call("search_text", {"page": 0}), submit(ANSWER))
    tool_runner = FixedToolRunner()
    outcome = run(scripted_llm, tool_runner=tool_runner)

    assert outcome.error_code is None and tool_runner.calls == []  # neither bad call reached the tools
    _, _, tools = by_kind(spans_of(outcome))
    bad_json, bad_schema = tools[0], tools[1]
    for span in (bad_json, bad_schema):
        assert span.attributes[semconv.DSX_TOOL_OUTCOME] == "error"
        assert span.attributes[semconv.DSX_TOOL_ERROR_CODE] == "invalid_arguments"
        assert span.status_code == "ERROR"
    assert bad_json.payload["input"] == {"arguments": None, "raw_arguments": '{"query": "supply voltage",'}
    sent = json.loads(scripted_llm.requests[1].messages[-1]["content"])
    assert sent["status"] == "error" and sent["untrusted_document_data"] is True
    assert sent["result"]["error"]["code"] == "invalid_arguments" and "not valid JSON" in sent["result"]["error"][
        "message"]
    schema_error = json.loads(scripted_llm.requests[2].messages[-1]["content"])["result"]["error"]
    assert "query" in schema_error["message"] and "page" in schema_error["message"]


def test_an_invalid_submit_is_refused_and_can_be_corrected(env, scripted_llm) -> None:  # noqa: ANN001, F811
    scripted_llm.script(submit({"found": True}), submit({"found": False}), submit({"found": False,
                                                                                   "reason": "not stated"}))
    outcome = run(scripted_llm)
    assert outcome.extraction is not None and outcome.extraction.found is False
    _, _, tools = by_kind(spans_of(outcome))
    assert [t.attributes[semconv.DSX_TOOL_OUTCOME] for t in tools] == ["error", "error", "ok"]
    assert "at least one value" in json.loads(scripted_llm.requests[1].messages[-1]["content"])["result"]["error"][
        "message"]


def test_429_then_success_is_retried_with_one_span_per_attempt(env, scripted_llm) -> None:  # noqa: ANN001, F811
    scripted_llm.script(error(429, "slow down", headers={"Retry-After": "0"}), submit(ANSWER))
    outcome = run(scripted_llm)

    assert outcome.error_code is None and outcome.extra["attempts"] == 2 and outcome.extra["turns"] == 1
    _, chats, _ = by_kind(spans_of(outcome))
    failed, succeeded = chats
    assert failed.attributes[semconv.DSX_HTTP_STATUS] == 429 and failed.status_code == "ERROR"
    assert failed.attributes[semconv.DSX_LLM_OUTCOME] == "error"
    assert failed.attributes[semconv.DSX_LLM_ERROR_TYPE] == "RateLimitError"
    assert failed.payload["output"]["error"]["retryable"] is True
    assert (failed.attributes[semconv.DSX_LLM_ATTEMPT], succeeded.attributes[semconv.DSX_LLM_ATTEMPT]) == (1, 2)
    assert failed.attributes[semconv.DSX_LLM_TURN] == succeeded.attributes[semconv.DSX_LLM_TURN] == 0
    assert len(scripted_llm.requests) == 2  # LiteLLM's and the SDK's own retries are off: one request per span


def test_server_errors_exhaust_the_bounded_retries_as_provider_error(env, scripted_llm) -> None:  # noqa: ANN001, F811
    configure(env, llm_max_retries=2)
    scripted_llm.script(error(503), error(502), error(500), submit(ANSWER))
    outcome = run(scripted_llm)

    assert outcome.error_code == "provider_error" and "HTTP 500" in (outcome.error_detail or "")
    _, chats, _ = by_kind(spans_of(outcome))
    assert [c.attributes[semconv.DSX_HTTP_STATUS] for c in chats] == [503, 502, 500]
    assert [c.attributes[semconv.DSX_LLM_ATTEMPT] for c in chats] == [1, 2, 3]
    assert len(scripted_llm.requests) == 3 and scripted_llm.remaining == 1


def test_a_client_error_is_not_retried(env, scripted_llm) -> None:  # noqa: ANN001, F811
    scripted_llm.script(error(400, "PDF blocks are not supported"), submit(ANSWER))
    outcome = run(scripted_llm)
    assert outcome.error_code == "provider_error" and len(scripted_llm.requests) == 1
    _, chats, _ = by_kind(spans_of(outcome))
    assert chats[0].attributes[semconv.DSX_LLM_ERROR_TYPE] == "BadRequestError"


def test_a_hang_past_the_call_timeout_ends_as_timeout(env, scripted_llm) -> None:  # noqa: ANN001, F811
    configure(env, call_timeout_s=0.5, llm_max_retries=1)
    scripted_llm.script(hang(HANG_S), hang(HANG_S))
    started = time.monotonic()
    outcome = run(scripted_llm)

    assert outcome.error_code == "timeout" and time.monotonic() - started < HANG_S / 3  # far less than one hang
    _, chats, _ = by_kind(spans_of(outcome))
    assert len(chats) == 2 and all(c.attributes[semconv.DSX_LLM_OUTCOME] == "error" for c in chats)
    assert all("Timeout" in c.attributes[semconv.DSX_LLM_ERROR_TYPE] for c in chats)
    assert all(c.duration_ms < 5000 for c in chats)


def test_the_parameter_deadline_bounds_the_whole_run(env, scripted_llm) -> None:  # noqa: ANN001, F811
    configure(env, call_timeout_s=30, parameter_timeout_s=2.0, llm_max_retries=5)
    scripted_llm.script(tool_call("search_text", {"query": "VDD"}), hang(HANG_S), hang(HANG_S))
    started = time.monotonic()
    outcome = run(scripted_llm)
    # Neither the 30 s call timeout nor the five retries: the 2 s parameter deadline ended it.
    assert outcome.error_code == "timeout" and time.monotonic() - started < HANG_S / 3
    assert 1 <= len(scripted_llm.requests) <= 3


@pytest.mark.parametrize("reasoning", ["Looking at the electrical characteristics table first.", None])
def test_reasoning_presence_is_recorded_against_expectation(env, scripted_llm, reasoning) -> None:  # noqa: ANN001, F811
    scripted_llm.script(submit(ANSWER, reasoning=reasoning))
    outcome = run(scripted_llm, reasoning=True)
    _, (chat,), _ = by_kind(spans_of(outcome))
    assert chat.attributes[semconv.DSX_LLM_REASONING_EXPECTED] is True
    assert chat.attributes[semconv.DSX_LLM_REASONING_PRESENT] is (reasoning is not None)
    assert chat.payload["output"]["reasoning"] == reasoning


def test_a_tool_call_token_repeated_to_the_length_limit_is_not_an_answer(env, scripted_llm) -> None:  # noqa: ANN001, F811
    configure(env, llm_max_output_tokens=64)
    scripted_llm.script(repeat_token("<tool_call>"), repeat_token("<|tool_call_begin|>"))
    outcome = run(scripted_llm)

    assert outcome.error_code == "submit_not_called" and "output limit" in (outcome.error_detail or "")
    _, chats, _ = by_kind(spans_of(outcome))
    for chat in chats:
        assert chat.attributes[semconv.GEN_AI_FINISH_REASONS] == ["length"]
        assert chat.attributes[semconv.DSX_LLM_OUTCOME] == "text_only"
        assert chat.attributes[semconv.DSX_HTTP_STATUS] == 200
        assert chat.attributes[semconv.GEN_AI_OUTPUT_TOKENS] == 64
    assert scripted_llm.requests[0].body["max_tokens"] == 64


def test_the_turn_budget_ends_a_run_that_never_submits(env, scripted_llm) -> None:  # noqa: ANN001, F811
    configure(env, max_turns=3)
    scripted_llm.always(tool_call("search_text", {"query": "VDD"}))
    outcome = run(scripted_llm)
    assert outcome.error_code == "budget_exhausted" and "Turn budget of 3" in (outcome.error_detail or "")
    assert len(scripted_llm.requests) == 3


def test_the_token_budget_ends_a_run(env, scripted_llm) -> None:  # noqa: ANN001, F811
    configure(env, token_budget=250)
    scripted_llm.always(tool_call("search_text", {"query": "VDD"}))
    outcome = run(scripted_llm)
    assert outcome.error_code == "budget_exhausted" and "Token budget" in (outcome.error_detail or "")
    assert outcome.extra["input_tokens"] + outcome.extra["output_tokens"] >= 250
    assert len(scripted_llm.requests) == 2


MEASURE = ToolSpec(name="measure", description="Measure the part on the bench.",
                   parameters={"type": "object", "properties": {"quantity": {"type": "string"}}})
SUBMIT_MEASUREMENT = ToolSpec(name="submit_measurement", description="Submit the measurement.",
                              parameters={"type": "object", "properties": {"value": {"type": "number"}}})


def test_a_later_phase_opens_only_after_the_submit(env, scripted_llm) -> None:  # noqa: ANN001, F811
    oracle = Phase(name="oracle", tools=(MEASURE,), submit=SUBMIT_MEASUREMENT)
    tool_runner = FixedToolRunner({"measure": {"value": 3.29}})
    scripted_llm.script(tool_call("measure", {"quantity": "VDD"}), submit(ANSWER),
                        tool_call("submit_extraction", ANSWER), tool_call("measure", {"quantity": "VDD"}),
                        tool_call("submit_measurement", {"value": 3.29}))
    outcome = run(scripted_llm, phases=[extraction_phase(), oracle], tool_runner=tool_runner)

    assert outcome.error_code is None and outcome.extraction is not None
    assert outcome.extra["submissions"]["oracle"] == {"value": 3.29}
    assert tool_runner.calls == [("measure", {"quantity": "VDD"})]  # the early call was refused, not executed
    offered = [r.tool_names for r in scripted_llm.requests]
    assert all("measure" not in names for names in offered[:2])
    assert all(names == ["measure", "submit_measurement"] for names in offered[2:])
    _, _, tools = by_kind(spans_of(outcome))
    early, refrozen = tools[0], tools[2]
    assert early.attributes[semconv.DSX_TOOL_ERROR_CODE] == "tool_not_available"
    assert early.attributes[semconv.DSX_PHASE] == "extraction"
    assert refrozen.attributes[semconv.GEN_AI_TOOL_NAME] == "submit_extraction"
    assert refrozen.attributes[semconv.DSX_TOOL_ERROR_CODE] == "tool_not_available"
    assert [t.attributes[semconv.DSX_PHASE] for t in tools[2:]] == ["oracle"] * 3
    opening = scripted_llm.requests[2].messages[-1]
    assert opening["role"] == "user" and "frozen" in opening["content"]


def test_response_format_is_never_sent_with_tools(env, scripted_llm) -> None:  # noqa: ANN001, F811
    scripted_llm.script(submit(ANSWER))
    model = scripted_llm.model_config()
    model.litellm_params["response_format"] = {"type": "json_schema", "json_schema": {"name": "x", "schema": {}}}
    outcome = engines.run_parameter(index=make_index(), request=ParameterRequest(name="Supply voltage"),
                                    model=model, engine="agentic", context=RunContext(),
                                    tool_runner=FixedToolRunner())
    assert outcome.error_code is None
    assert "response_format" not in scripted_llm.requests[0].body and scripted_llm.requests[0].body["tools"]


def test_tool_choice_is_not_forced_where_the_model_does_not_support_it(env, scripted_llm) -> None:  # noqa: ANN001, F811
    scripted_llm.script(submit(ANSWER))
    run(scripted_llm, supports_tool_choice=False)
    assert "tool_choice" not in scripted_llm.requests[0].body


def test_single_pass_sends_the_text_layer_and_offers_only_the_submit(env, scripted_llm) -> None:  # noqa: ANN001, F811
    scripted_llm.script(submit(ANSWER))
    tool_runner = FixedToolRunner()
    outcome = run(scripted_llm, engine="single-pass", tool_runner=tool_runner)

    assert outcome.engine == "single-pass" and outcome.extraction is not None and tool_runner.calls == []
    (request,) = scripted_llm.requests
    assert request.tool_names == ["submit_extraction"]
    user = request.messages[1]["content"]
    assert user.count("<parameter_request>") == 1
    assert '<document pages="2">\n--- page 1 ---\nElectrical characteristics' in user
    assert "--- page 2 ---\nPackage outline\nSOT-23\n</document>" in user
    root, _, _ = by_kind(spans_of(outcome))
    assert root.attributes[semconv.DSX_ENGINE] == "single-pass"


def test_auto_routes_a_document_that_fits_to_single_pass_and_records_why(env, scripted_llm) -> None:  # noqa: ANN001, F811
    scripted_llm.script(submit(ANSWER))
    outcome = run(scripted_llm, engine="auto", context_window=128_000, max_pdf_pages=100)
    assert outcome.engine == "single-pass"
    (route,) = [s for s in spans_of(outcome) if s.name == semconv.SPAN_ROUTE]
    assert route.attributes[semconv.DSX_ROUTE_ENGINE] == "single-pass"
    assert "fit" in route.attributes[semconv.DSX_ROUTE_REASON]
    assert route.attributes[semconv.DSX_ROUTE_DOCUMENT_MODE] == "text"


def test_a_gateway_serves_pass_through_aliases(env, scripted_llm) -> None:  # noqa: ANN001, F811
    from app.agent.registry import resolve_model

    configure(env, gateway_url=scripted_llm.base_url, gateway_key="sk-gateway")
    scripted_llm.script(submit(ANSWER))
    outcome = engines.run_parameter(index=make_index(), request=ParameterRequest(name="Supply voltage"),
                                    model=resolve_model("team-gpt"), engine="agentic", context=RunContext(),
                                    tool_runner=FixedToolRunner())
    assert outcome.error_code is None
    (request,) = scripted_llm.requests
    assert request.body["model"] == "team-gpt"
    assert request.headers.get("authorization") == "Bearer sk-gateway"


def test_a_models_file_alias_reaches_its_server(env, scripted_llm, tmp_path) -> None:  # noqa: ANN001, F811
    import yaml

    from app.agent.registry import resolve_model

    models_file = tmp_path / "models.yaml"
    models_file.write_text(yaml.safe_dump({"model_list": [scripted_llm.models_file_entry("qwen-vllm")]}))
    configure(env, models_file=models_file, model="qwen-vllm")
    scripted_llm.script(submit(ANSWER))
    model = resolve_model(None)
    outcome = engines.run_parameter(index=make_index(), request=ParameterRequest(name="Supply voltage"),
                                    model=model, engine="agentic", context=RunContext(),
                                    tool_runner=FixedToolRunner())
    assert outcome.model == "qwen-vllm" and outcome.error_code is None
    assert scripted_llm.requests[0].body["model"] == "scripted"


def test_document_tools_over_a_real_index(env, scripted_llm, tmp_path) -> None:  # noqa: ANN001, F811
    from app.documents.cache import open_index
    from tests.support.pdfs import text_pdf

    path = tmp_path / "ds.pdf"
    text_pdf(PAGES, path)
    index = open_index(path)
    scripted_llm.script(tool_call("search_text", {"query": "supply voltage"}), submit(ANSWER))
    outcome = engines.run_parameter(index=index, request=ParameterRequest(name="Supply voltage"),
                                    model=scripted_llm.model_config(), engine="agentic", context=RunContext())
    assert outcome.error_code is None
    _, _, tools = by_kind(spans_of(outcome))
    assert tools[0].attributes[semconv.DSX_TOOL_OUTCOME] == "ok"
    envelope = json.loads(scripted_llm.requests[1].messages[-1]["content"])
    assert envelope["untrusted_document_data"] is True and envelope["result"]["hits"][0]["page"] == 1


def test_the_chat_record_keeps_raw_and_parsed_tool_calls(env, scripted_llm) -> None:  # noqa: ANN001, F811
    scripted_llm.script(malformed_tool_call("search_text"), submit(ANSWER))
    outcome = run(scripted_llm)
    _, chats, _ = by_kind(spans_of(outcome))
    bad, good = (c.payload["output"]["tool_calls"][0] for c in chats)
    assert bad["arguments"] == '{"query": "supply voltage",' and bad["parsed"] is None
    assert good["parsed"]["quote"] == ANSWER["quote"]
    assert chats[0].payload["output"]["raw"]["choices"][0]["finish_reason"] == "tool_calls"
    assert chats[1].payload["input"]["message_offset"] == 2  # the system and user messages were in the first
    assert [m["role"] for m in chats[1].payload["input"]["messages"]] == ["assistant", "tool"]


def test_a_rejected_pdf_block_falls_back_to_the_text_layer(env, scripted_llm, tmp_path) -> None:  # noqa: ANN001, F811
    from dataclasses import replace

    from tests.support.pdfs import text_pdf

    path = tmp_path / "ds.pdf"
    text_pdf(PAGES, path)
    scripted_llm.script(error(400, "file content parts are not supported"), submit(ANSWER))
    outcome = run(scripted_llm, engine="single-pass", index=replace(make_index(), path=path),
                  supports_pdf_input=True)

    assert outcome.error_code is None and outcome.extra["document_mode"] == "text"
    first, second = scripted_llm.requests
    parts = first.messages[1]["content"]
    assert [p["type"] for p in parts] == ["text", "text", "file", "text"]
    assert parts[2]["file"]["file_data"].startswith("data:application/pdf;base64,JVBER")
    assert '<document pages="2">\n--- page 1 ---' in second.messages[1]["content"]
    spans = spans_of(outcome)
    root, chats, _ = by_kind(spans)
    assert [e["name"] for e in root.events] == ["document_mode_fallback"]
    assert "base64 data omitted" in json.dumps(chats[0].payload["input"])  # the PDF bytes are the stored blob
    (route,) = [s for s in spans if s.name == semconv.SPAN_ROUTE]
    assert route.attributes[semconv.DSX_ROUTE_DOCUMENT_MODE] == "pdf"


def test_the_offline_reader_crosses_the_same_transport_and_spans(env, tmp_path) -> None:  # noqa: ANN001
    from app.agent.registry import resolve_model
    from app.agent.tools import DocumentToolRunner
    from app.documents.cache import open_index
    from tests.support.pdfs import text_pdf

    path = tmp_path / "ds.pdf"
    text_pdf(["Electrical characteristics", "Parameter Symbol Min Typ Max Unit\n"
              "Supply voltage VDD 2.7 3.3 5.5 V\nSupply current IDD 1.2 2.0 mA"], path)
    index = open_index(path)
    outcome = engines.run_parameter(index=index, request=ParameterRequest(name="Supply voltage", unit="V"),
                                    model=resolve_model("offline/datasheet-reader"), engine="auto",
                                    context=RunContext(job_id="job-1", parameter_id=1),
                                    tool_runner=DocumentToolRunner(index))
    assert outcome.engine == "agentic" and outcome.error_code is None
    root, chats, tools = by_kind(spans_of(outcome))
    assert chats and all(c.name == "chat datasheet-reader" for c in chats)
    assert all(c.attributes[semconv.DSX_HTTP_STATUS] == 200 for c in chats)
    assert tools[-1].attributes[semconv.GEN_AI_TOOL_NAME] == "submit_extraction"
    assert root.attributes[semconv.DSX_OUTCOME] == "submitted"


def test_rate_limits_lasting_past_the_deadline_end_as_timeout(env, scripted_llm) -> None:  # noqa: ANN001, F811
    configure(env, parameter_timeout_s=1.0, llm_backoff_s=0.6, llm_backoff_max_s=5, llm_max_retries=10)
    scripted_llm.always(error(429, "rate limited"))
    started = time.monotonic()
    outcome = run(scripted_llm)
    assert outcome.error_code == "timeout" and "RateLimitError" in (outcome.error_detail or "")
    # Ten retries backing off up to 5 s each would take tens of seconds; the 1 s deadline ends it long before.
    assert time.monotonic() - started < 8 and 1 <= len(scripted_llm.requests) <= 3
