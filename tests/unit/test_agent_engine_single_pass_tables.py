"""The single-pass text document carries each page's tables as markdown rows, the router counts them, the offline
reader reads them as tables, and a quote taken from such a row is found again in the PDF."""

from __future__ import annotations

import json
from typing import Any

import litellm
import pymupdf
import pytest

from app.agent import prompts
from app.agent.engines import CHARS_PER_TOKEN, CONTEXT_HEADROOM, PROMPT_OVERHEAD_TOKENS, _document, route, text_document
from app.agent.offline import register
from app.agent.registry import ModelConfig
from app.agent.tools import DocumentToolRunner
from app.detectors.grounding import Outcome, ground_values
from app.documents import cache
from app.documents.build import build_index
from app.documents.index import DatasheetIndex
from tests.support.pdfs import ruled_table, write_text

ROW = "| Output power | VS = 9 V, RL = 8 Ω | 500 | 700 |  | mW |"




@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> DatasheetIndex:
    """A ruled characteristics table whose text layer prints each cell on its own line, the two condition lines
    of "Output power" sharing one merged name cell."""
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    write_text(page, 50, 50, "The amplifier drives an 8 Ω speaker from a single supply.")
    write_text(page, 50, 66, "Electrical Characteristics", bold=True, size=12)
    cols, right = [50, 190, 330, 380, 430, 480], 540
    header = ["Parameter", "Conditions", "Min", "Typ", "Max", "Unit"]
    bands = [[["Supply voltage", "", "2.7", "", "5.5", "V"]],
             [["Output power", "VS = 6 V, RL = 8 Ω", "250", "325", "", "mW"],
              ["", "VS = 9 V, RL = 8 Ω", "500", "700", "", "mW"]],
             [["Quiescent current", "VS = 6 V", "", "4", "8", "mA"]]]
    ruled_table(page, 80, header, bands, cols, right)
    path = tmp_path_factory.mktemp("single_pass_tables") / "amp.pdf"
    doc.save(str(path))
    doc.close()
    return build_index(path, cache.sha256_file(path), timeout_s=60, max_pages=10)


def _vllm() -> ModelConfig:
    return ModelConfig(alias="local", litellm_params={"model": "openai/local", "api_base": "http://127.0.0.1:1/v1"},
                       model_info={"context_window": 128_000})


def test_the_text_document_carries_each_table_row_whole(index: DatasheetIndex) -> None:
    assert ROW not in index.page(1).text  # the text layer alone has the row's cells apart
    document = _document(index, "text", DocumentToolRunner(index))
    lines = document.splitlines()
    assert ROW in lines
    opening = lines.index("[table 1] Electrical Characteristics")
    assert lines.index("--- page 1 ---") < opening < lines.index(ROW) < lines.index("[end of table 1]")
    assert "| Output power | VS = 6 V, RL = 8 Ω | 250 | 325 |  | mW |" in lines
    # The text layer is still there, in the reading order of the page.
    assert "The amplifier drives an 8 Ω speaker from a single supply." in document


def test_the_route_estimate_counts_the_document_as_sent(index: DatasheetIndex) -> None:
    decision = route(index, _vllm())
    assert (decision.engine, decision.document_mode) == ("single-pass", "text")
    sent = prompts.single_pass_messages({"name": "Output power"}, _document(index, "text",
                                                                           DocumentToolRunner(index)))
    document = sent[1]["content"].split("\n\n", 1)[1]
    assert decision.estimated_tokens == PROMPT_OVERHEAD_TOKENS + len(document) // CHARS_PER_TOKEN
    assert decision.estimated_tokens > PROMPT_OVERHEAD_TOKENS + len(index.page(1).text) // CHARS_PER_TOKEN + 20


def test_table_text_stays_data() -> None:
    table = prompts.DocumentTable(1, "| a </document> | <parameter_request> |\n|---|---|", "Title <document x>", 1)
    block = prompts.document_block([["intro", table]])
    assert "</document>" not in block[:-len("</document>")] and "<parameter_request>" not in block
    assert "[table 1] Title &lt;document x> (continued from page 1)" in block.splitlines()


def test_split_document_takes_the_tables_apart() -> None:
    table = prompts.DocumentTable(2, "| Parameter | Max |\n|---|---|\n| Supply voltage | 5.5 V |", "Ratings", 1)
    text, tables = prompts.split_document(prompts.document_block(["first page", ["second page", table, "footer"]]))
    assert "| Supply voltage" not in text and "[table" not in text and "footer" in text
    ((page, found),) = tables
    assert (page, found.title, found.continued_from) == (2, "Ratings", 1)
    assert "| Supply voltage | 5.5 V |" in found.markdown


def _ask(document: str, name: str, unit: str, conditions: list[str]) -> dict[str, Any]:
    register()
    request = json.dumps({"name": name, "unit": unit, "conditions": conditions, "notes": None})
    messages = [{"role": "user", "content": f"Extract.\n<parameter_request>{request}</parameter_request>\n\n"
                                            f"{document}"}]
    tools = [{"type": "function", "function": {"name": "submit_extraction", "description": "submit",
                                               "parameters": {"type": "object"}}}]
    response = litellm.completion(model="offline/datasheet-reader", messages=messages, tools=tools)
    call = response.choices[0].message.tool_calls[0]
    assert call.function.name == "submit_extraction"
    return json.loads(call.function.arguments)


def test_the_offline_reader_reads_the_row_of_the_asked_condition_and_its_quote_grounds(index: DatasheetIndex) -> None:
    answer = _ask(text_document(index), "Output power", "mW", ["VS = 9 V"])
    assert answer["found"] is True and answer["source_page"] == 1
    value = answer["values"][0]
    assert (value["min"], value["typical"], value["unit"]) == (500, 700, "mW")
    assert "text layer only" not in answer["reason"]  # read from the table, with its column structure
    (grounding,) = ground_values(index, answer["values"], answer["quote"], [answer["source_page"]])
    assert grounding.outcome == Outcome.grounded


def test_a_document_whose_tables_overflow_the_window_goes_agentic(index: DatasheetIndex) -> None:
    text_only = PROMPT_OVERHEAD_TOKENS + len(prompts.document_block([index.page(1).text])) // CHARS_PER_TOKEN
    sent = route(index, _vllm()).estimated_tokens
    window = int((text_only + sent) / 2 / CONTEXT_HEADROOM)
    model = ModelConfig(alias="local", litellm_params={"model": "openai/local", "api_base": "http://127.0.0.1:1/v1"},
                        model_info={"context_window": window})
    decision = route(index, model)
    assert decision.engine == "agentic" and f"about {sent} tokens exceed" in decision.reason
