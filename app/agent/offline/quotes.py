"""The verbatim quote: the document text a value was read from, so it can be found again in the PDF.

A table value is quoted from the page's text layer, not from the Markdown table (which re-spaces and
re-orders cells): the lines from the row's name to its last number, and its unit when printed just after.
Lines are joined by single spaces, which is how whitespace-collapsed grounding compares text.
"""

from __future__ import annotations

import re

from app.agent.offline.candidates import Candidate
from app.agent.offline.synonyms import compact
from app.agent.offline.values import EMPTY_CELL, read_values
from app.units import parse_unit


def _number_in(text: str, printed: str) -> int:
    """Position of a printed number in text as a whole token, or -1."""
    match = re.search(rf"(?<![\d.,]){re.escape(printed)}(?![\d])", text)
    return match.start() if match else -1


def build_quote(lines: list[str], cand: Candidate, max_lines: int = 12) -> str | None:
    """Verbatim text (lines joined by single spaces) that holds the label and the printed numbers in order."""
    printed = [p for p in cand.printed if p]
    if not lines:
        return _short(cand.line_text) if cand.line_text and cand.source == "line" else None
    if cand.source == "line" and cand.line_text in lines:
        return _trim_line(cand.line_text, cand.value_text)
    run = _run_of_lines(lines, cand.line_text) if cand.source == "line" and cand.line_text else None
    if run is not None:
        return _short(run)
    label_key = compact(" ".join(cand.label.split()[:3]))
    name_starts = [i for i, line in enumerate(lines) if label_key and label_key[:12] in compact(line)]
    symbol_key = compact(cand.symbol.split()[0]) if cand.symbol.split() else ""
    symbol_starts = [i for i, line in enumerate(lines) if symbol_key and compact(line) == symbol_key]
    # A quote starts at the row's name when that stays tight; a name printed once above several rows would
    # pull in the rows between, and then the row's symbol is the better start.
    for starts, span in ((name_starts, 8), (name_starts + symbol_starts, max_lines)):
        windows = [(end - start, start, end) for start in starts
                   if (end := _window_with_numbers(lines, start, printed, max_lines)) is not None
                   and end - start < span]
        if windows:
            _, start, end = min(windows)
            return _short(" ".join(lines[start:_with_unit(lines, end, cand) + 1]))
    for start in range(len(lines)):
        if printed and _number_in(lines[start], printed[0]) >= 0:
            window = _window_with_numbers(lines, start, printed, 4)
            if window is not None:
                return _short(" ".join(lines[start:_with_unit(lines, window, cand) + 1]))
    return None


def _run_of_lines(lines: list[str], text: str, most: int = 6) -> str | None:
    """Consecutive lines that together print ``text`` (a row read from one cell per line), joined."""
    wanted = compact(text)
    for start, line in enumerate(lines):
        joined = compact(line)
        if not joined or not wanted.startswith(joined):
            continue
        for end in range(start + 1, min(len(lines), start + most) + 1):
            if joined == wanted:
                return " ".join(lines[start:end])
            if end == len(lines):
                break
            joined += compact(lines[end])
            if not wanted.startswith(joined):
                break
    return None


def _with_unit(lines: list[str], end: int, cand: Candidate) -> int:
    """Extend a quote to the unit cell printed a few lines after the last number, so it reads as a value."""
    if cand.unit is None:
        return end
    for nxt in range(end + 1, min(len(lines), end + 4)):
        text = lines[nxt].strip()
        unit = parse_unit(text)
        if unit is not None and unit.canonical == cand.unit.canonical:
            return nxt
        if read_values(text) == [] and not EMPTY_CELL.match(text):
            break
    return end


def _window_with_numbers(lines: list[str], start: int, printed: list[str], max_lines: int) -> int | None:
    position = 0
    for end in range(start, min(len(lines), start + max_lines)):
        offset = 0
        line = lines[end]
        while position < len(printed):
            found = _number_in(line[offset:], printed[position])
            if found < 0:
                break
            offset += found + len(printed[position])
            position += 1
        if position == len(printed):
            return end
    return None


def _trim_line(line: str, value_text: str) -> str:
    text = line.strip()
    if len(text) <= 200:
        return text
    at = text.find(value_text)
    if at < 0:
        return text[:200]
    start = max(0, at - 150)
    return text[start:at + len(value_text) + 40].strip()


def _short(text: str) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    return text if len(text) <= 400 else text[:400]
