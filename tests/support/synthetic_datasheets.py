"""Invented datasheet pages drawn as PDFs (prose lines and ruled tables), and the offline reader driven over
them through the real document tools, the way the agent loop drives any model."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import litellm
import pymupdf

from app.agent.offline import register
from app.documents import cache
from app.documents.build import build_index
from app.documents.index import DatasheetIndex
from app.documents.tools import DocumentTools

FONT_SIZE = 8.0
LEFT, RIGHT = 40.0, 555.0
ROW_HEIGHT = 16.0
_FONT = pymupdf.Font("helv")  # through a TextWriter it prints "–", "±", "µ" as themselves
TOOLS = ("build_datasheet", "get_section_text", "search_text", "extract_table_markdown", "submit_extraction")


def _text(page: pymupdf.Page, x: float, y: float, text: str, size: float = FONT_SIZE) -> None:
    writer = pymupdf.TextWriter(page.rect)
    writer.append((x, y), text, font=_FONT, fontsize=size)
    writer.write_text(page)


def _column_edges(rows: Sequence[Sequence[str]]) -> list[float]:
    width = max(len(r) for r in rows)
    wanted = [max(_FONT.text_length(r[i] if i < len(r) else "", fontsize=FONT_SIZE) for r in rows) + 10
              for i in range(width)]
    scale = min(1.0, (RIGHT - LEFT) / sum(wanted))
    edges = [LEFT]
    for w in wanted:
        edges.append(edges[-1] + w * scale)
    return edges


def draw_table(page: pymupdf.Page, top: float, rows: Sequence[Sequence[str]]) -> float:
    """A grid with a rule around every cell; returns the y below it."""
    edges = _column_edges(rows)
    y = top
    for row in rows:
        for i, text in enumerate(row):
            if text:
                _text(page, edges[i] + 3, y + ROW_HEIGHT - 5, text)
        page.draw_line((edges[0], y), (edges[-1], y))
        y += ROW_HEIGHT
    page.draw_line((edges[0], y), (edges[-1], y))
    for x in edges:
        page.draw_line((x, top), (x, y))
    return y


def draw_page(path: Path, prose: Sequence[str], tables: Sequence[Sequence[Sequence[str]]],
              titles: Sequence[str] = ()) -> Path:
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    y = 60.0
    for line in prose:
        _text(page, LEFT, y, line, size=10)
        y += 15
    for n, rows in enumerate(tables):
        title = titles[n] if n < len(titles) else ""
        y += 18
        if title:
            _text(page, LEFT, y, title, size=10)
            y += 8
        y = draw_table(page, y, rows)
    doc.save(path)
    doc.close()
    return path


def index_of(path: Path) -> DatasheetIndex:
    return build_index(path, cache.sha256_file(path), timeout_s=60, max_pages=20)


def _tool_specs() -> list[dict[str, Any]]:
    return [{"type": "function", "function": {"name": n, "description": n, "parameters": {"type": "object"}}}
            for n in TOOLS]


def ask_reader(index: DatasheetIndex, name: str, unit: str | None = None,
               conditions: Sequence[str] = ()) -> dict[str, Any]:
    """The reader's submitted extraction for one request: real LiteLLM calls, real document tools."""
    register()
    tools = DocumentTools(index)
    request = json.dumps({"name": name, "unit": unit, "conditions": list(conditions), "notes": None})
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You extract datasheet parameters."},
        {"role": "user", "content": f"Extract this parameter.\n<parameter_request>{request}</parameter_request>"}]
    for _ in range(20):
        response = litellm.completion(model="offline/datasheet-reader", messages=messages, tools=_tool_specs())
        message = response.choices[0].message
        messages.append(message.model_dump())
        for call in message.tool_calls:
            arguments = json.loads(call.function.arguments)
            if call.function.name == "submit_extraction":
                return arguments
            result = tools.call(call.function.name, arguments)
            envelope = {"tool": call.function.name, "status": "error" if "error" in result else "ok",
                        "untrusted_document_data": True, "result": result}
            messages.append({"role": "tool", "tool_call_id": call.id, "content": json.dumps(envelope)})
    raise AssertionError("the reader never submitted")
