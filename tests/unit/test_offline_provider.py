"""The offline reader as a LiteLLM provider: tool calls only, offered tools only, driven by real document tools."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import litellm
import pytest

from app.agent.offline import PROVIDER, register
from app.documents.cache import open_index
from app.documents.tools import DocumentTools
from tests.support.pdfs import text_pdf

MODEL = "offline/datasheet-reader"
ALL_TOOLS = ("build_datasheet", "get_section_text", "search_text", "extract_table_markdown", "inspect_page",
             "submit_extraction")

PAGES = [
    "ACME LX100 low-power sensor\nFeatures\nSupply voltage: 1.7 - 3.6 V\nStandby current 0.8 uA typical\n"
    "Operating temperature range -40 to +85 °C",
    "Description\nThe LX100 measures ambient light.\nIts output is a 16-bit word.\n"
    "Output data rate up to 400 kHz (I2C fast mode)",
]


def _tools(*names: str) -> list[dict[str, Any]]:
    return [{"type": "function", "function": {"name": n, "description": n, "parameters": {"type": "object"}}}
            for n in names]


def _user(name: str, unit: str | None = None, document: str | None = None) -> dict[str, Any]:
    request = json.dumps({"name": name, "unit": unit, "conditions": [], "notes": None})
    text = f"Extract this parameter.\n<parameter_request>{request}</parameter_request>"
    if document is not None:
        text += f"\n{document}"
    return {"role": "user", "content": text}


def _calls(response: Any) -> list[tuple[str, dict[str, Any], str]]:
    message = response.choices[0].message
    return [(c.function.name, json.loads(c.function.arguments), c.id) for c in message.tool_calls]


def _drive(pdf: Path, name: str, unit: str | None, offered: tuple[str, ...] = ALL_TOOLS,
           broken: tuple[str, ...] = ()) -> tuple[dict[str, Any], list[str]]:
    """A minimal agent loop: real LiteLLM calls, tool calls executed against the real document tools."""
    tools = DocumentTools(open_index(pdf))
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You extract datasheet parameters."},
                                      _user(name, unit)]
    made: list[str] = []
    for _ in range(12):
        response = litellm.completion(model=MODEL, messages=messages, tools=_tools(*offered))
        assert response.choices[0].finish_reason == "tool_calls"
        calls = _calls(response)
        messages.append(response.choices[0].message.model_dump())
        for tool, args, call_id in calls:
            assert tool in offered
            made.append(tool)
            if tool == "submit_extraction":
                return args, made
            if tool in broken:
                envelope = {"tool": tool, "status": "error", "untrusted_document_data": True,
                            "result": {"error": {"code": "internal", "message": "tool failed"}}}
            else:
                result = getattr(tools, tool)(**args)
                envelope = {"tool": tool, "status": "error" if "error" in result else "ok",
                            "untrusted_document_data": True, "result": result}
            messages.append({"role": "tool", "tool_call_id": call_id, "content": json.dumps(envelope)})
    raise AssertionError(f"no submission after {made}")


@pytest.fixture
def sensor_pdf(dsx_env, tmp_path: Path) -> Path:  # noqa: ANN001 - fixture from conftest
    register()
    path = tmp_path / "lx100.pdf"
    text_pdf(PAGES, path)
    return path


def test_register_is_idempotent() -> None:
    register()
    register()
    entries = [e for e in litellm.custom_provider_map if e["provider"] == PROVIDER]
    assert len(entries) == 1
    assert PROVIDER in litellm.provider_list


def test_answers_with_tool_calls_only_and_plausible_usage() -> None:
    register()
    response = litellm.completion(model=MODEL, messages=[_user("Supply voltage", "V")], tools=_tools(*ALL_TOOLS))
    message = response.choices[0].message
    assert response.choices[0].finish_reason == "tool_calls"
    assert not message.content
    assert [name for name, _, _ in _calls(response)] == ["build_datasheet", "search_text"]
    assert response.usage.prompt_tokens > 10 and response.usage.completion_tokens > 0


def test_calls_only_the_tools_offered() -> None:
    register()
    response = litellm.completion(model=MODEL, messages=[_user("Supply voltage", "V")],
                                  tools=_tools("search_text", "submit_extraction"))
    (name, args, _), = _calls(response)
    assert name == "search_text"
    assert "Supply voltage" in args["query"]


def test_async_completion() -> None:
    register()
    response = asyncio.run(litellm.acompletion(model=MODEL, messages=[_user("Supply voltage", "V")],
                                               tools=_tools(*ALL_TOOLS)))
    assert response.choices[0].finish_reason == "tool_calls"


def test_single_pass_reads_the_document_block() -> None:
    register()
    document = ('<document pages="2">\n--- page 1 ---\nFeatures\nSupply voltage: 1.7 - 3.6 V\n'
                '--- page 2 ---\nStorage temperature -65 to +150 °C\n</document>')
    response = litellm.completion(model=MODEL, messages=[_user("Supply voltage", "V", document)],
                                  tools=_tools("submit_extraction"))
    (name, args, _), = _calls(response)
    assert name == "submit_extraction"
    assert args["found"] is True and args["source_page"] == 1
    assert (args["values"][0]["min"], args["values"][0]["max"], args["values"][0]["unit"]) == (1.7, 3.6, "V")
    assert args["quote"] == "Supply voltage: 1.7 - 3.6 V"


def test_without_a_request_it_declines() -> None:
    register()
    response = litellm.completion(model=MODEL, messages=[{"role": "user", "content": "hello"}],
                                  tools=_tools(*ALL_TOOLS))
    (name, args, _), = _calls(response)
    assert name == "submit_extraction" and args["found"] is False and args["reason"]


def test_agentic_run_over_the_document_tools(sensor_pdf: Path) -> None:
    submission, made = _drive(sensor_pdf, "Operating temperature range", "degC")
    assert submission["found"] is True
    value = submission["values"][0]
    assert (value["min"], value["max"], value["unit"]) == (-40.0, 85.0, "degC")
    assert submission["source_page"] == 1
    assert submission["quote"] in PAGES[0].replace("\n", " ")
    assert made[:2] == ["build_datasheet", "search_text"]
    assert made.count("search_text") == 2  # located, then cross-checked
    assert 0.0 < submission["confidence"] <= 1.0


def test_limit_word_on_a_feature_line(sensor_pdf: Path) -> None:
    submission, _ = _drive(sensor_pdf, "Output data rate", "kHz")
    assert submission["found"] is True
    value = submission["values"][0]
    assert (value["typical"], value["max"], value["unit"]) == (None, 400.0, "kHz")
    assert submission["source_page"] == 2


def test_declines_a_parameter_the_document_does_not_state(sensor_pdf: Path) -> None:
    submission, made = _drive(sensor_pdf, "Output impedance", "ohm")
    assert submission["found"] is False
    assert submission["reason"]
    assert made.count("search_text") == 2  # the phrases, then a wider net of symbols and single words


def test_adapts_when_a_tool_fails(sensor_pdf: Path) -> None:
    submission, made = _drive(sensor_pdf, "Supply voltage", "V", broken=("extract_table_markdown",))
    assert "get_section_text" in made
    assert submission["found"] is True
    value = submission["values"][0]
    assert (value["min"], value["max"]) == (1.7, 3.6)


def test_works_without_table_or_build_tools(sensor_pdf: Path) -> None:
    submission, made = _drive(sensor_pdf, "Standby current", "uA",
                              offered=("search_text", "get_section_text", "submit_extraction"))
    assert set(made) <= {"search_text", "get_section_text", "submit_extraction"}
    assert submission["found"] is True
    assert submission["values"][0]["typical"] == 0.8


def test_production_path_on_a_real_datasheet(dsx_env, datasheets_dir: Path) -> None:  # noqa: ANN001
    from app.agent.engines import run_parameter
    from app.agent.registry import resolve_model
    from app.agent.schemas import ParameterRequest, RunContext
    from app.dispatch import telemetry

    index = open_index(datasheets_dir / "speaker_amplifier.pdf")
    telemetry.reset()  # spans go to this test's database
    try:
        outcome = run_parameter(index=index, request=ParameterRequest(name="Quiescent current", unit="mA"),
                                model=resolve_model(MODEL), engine="agentic", context=RunContext())
        telemetry.flush()
    finally:
        telemetry.reset()
    assert outcome.error_code is None
    extraction = outcome.extraction
    assert extraction is not None and extraction.found
    value = extraction.values[0]
    assert (value.typical, value.max, value.unit) == (4.0, 8.0, "mA")
    page_text = " ".join(index.page(extraction.source_page).text.split())
    assert extraction.quote and extraction.quote in page_text


def test_a_later_phase_gets_its_own_submit_tool_only() -> None:
    register()
    frozen = {"found": True, "values": [{"typical": 4.0, "unit": "mA"}], "source_page": 3, "quote": "4 mA",
              "confidence": 0.8, "reason": "read"}
    messages = [_user("Quiescent current", "mA"),
                {"role": "assistant", "content": None, "tool_calls": [
                    {"id": "c1", "type": "function",
                     "function": {"name": "submit_extraction", "arguments": json.dumps(frozen)}}]},
                {"role": "tool", "tool_call_id": "c1", "content": json.dumps(
                    {"tool": "submit_extraction", "status": "ok", "untrusted_document_data": True,
                     "result": {"accepted": True}})},
                {"role": "user", "content": "Phase two: measurements are available."}]
    response = litellm.completion(model=MODEL, messages=messages, tools=_tools("measure", "submit_verdict"))
    (name, args, _), = _calls(response)
    assert name == "submit_verdict"
    assert args == frozen


def test_follows_the_cursor_of_a_page_cut_by_the_text_tool(dsx_env, tmp_path: Path) -> None:  # noqa: ANN001
    # A dense one-page spec sheet: the text tool cuts it, and the value sits in the part after the cut.
    register()
    filler = [f"Menu item {n}: selectable mode list kept for reference, with options A, B, C, D and E in each "
              f"menu of the camera" for n in range(230)]
    path = tmp_path / "dense.pdf"
    text_pdf(["\n".join(["Main specifications", *filler, "Mass", "Sensor head only", "Approx. 418 g"])], path,
             fontsize=2)
    submission, made = _drive(path, "Mass (sensor head only)", "g")
    assert submission["found"] is True, (made, submission)
    assert (submission["values"][0]["typical"], submission["values"][0]["unit"]) == (418.0, "g")
    assert made.count("get_section_text") == 2
