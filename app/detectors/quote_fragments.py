"""A quote as models write it, taken apart into the pieces the datasheet actually prints.

Hosted models rarely copy the text layer. They join passages from several places (`` | ``, ``;``, `` / ``,
newlines), put the printed text in quotation marks inside their own commentary, add annotations of their own
(``(p.1)``, ``[Table 7, p.9]``, ``(Max column)``), label cells (``Typ=4.5``, ``300 [min]``, ``Min: –``) and prefix a
table's caption (``Table 7 Pressure Transfer Function: …``). :func:`fragments` undoes that: it returns the pieces
that should each be found on one row or one nearby block of lines of the document, in the order written;
:func:`readings` gives a piece with and without the ``Title:`` prefix it may carry.
"""

from __future__ import annotations

import re

# Words that say where something is, not what it is: a bracketed group holding one of them is an annotation.
_WHERE = r"(?:p\.?\s*\d|pp?\.\s*\d|pages?\b|tables?\b|fig(?:ure)?s?\.?\b|sections?\b|columns?\b|rows?\b|features\b" \
         r"|datasheet\b|chapter\b|see\b|cf\.|footnote\b|note\s*\d)"
_ANNOTATION = re.compile(rf"\((?=[^()]*{_WHERE})[^()]*\)|\[(?=[^\[\]]*{_WHERE})[^\[\]]*\]", re.IGNORECASE)
_FIELD = r"(?:min(?:imum)?|typ(?:ical)?|max(?:imum)?|nom(?:inal)?|units?|symbol|value)\.?"
# "Min: –", "Typ = -" : a labelled empty cell says nothing printable.
_EMPTY_LABELLED = re.compile(rf"\b{_FIELD}\s*[=:]\s*[–—―‒-]+(?=\s|$|[,;|])", re.IGNORECASE)
# "Typ=4.5", "max: 5.5", "(typ)", "[min]": the label is the model's, the number is the document's.
_LABEL_BEFORE = re.compile(rf"\b{_FIELD}\s*[=:]\s*", re.IGNORECASE)
_LABEL_BRACKETED = re.compile(rf"[\[(]\s*{_FIELD}\s*[\])]", re.IGNORECASE)
_CAPTION_NUMBER = re.compile(r"^\s*(?:table|figure|fig\.)\s*\d+[a-z]?\b[.:]?\s*", re.IGNORECASE)
_PREFIX = re.compile(r"^[^:]{3,80}:\s+(?=\S)")
_ORPHAN_PUNCTUATION = re.compile(r"(?:(?<=\s)|^)[,;]+(?=\s|$)")
_QUOTED = re.compile(r"[\"“”„«»]([^\"“”„«»]{3,})[\"“”„«»]")
_SPLIT = re.compile(r"\s+\|\s+|\s*\|\s*(?=\S)|;\s+|\s+/\s+|\n+|\s+…\s+|\s*\.{3,}\s*"
                    r"|(?<=[a-z)\]])\.\s+(?=[A-Z(])")
# A line with this many cell separators is one table row written as markdown, not passages joined by pipes.
_MARKDOWN_ROW_PIPES = 3
MIN_FRAGMENT_CHARS = 3
_WORD = re.compile(r"[^\W\d_]{3,}")


def strip_annotations(text: str) -> str:
    """``text`` without the model's own location notes and cell labels."""
    text = _ANNOTATION.sub(" ", text)
    text = _EMPTY_LABELLED.sub(" ", text)
    text = _LABEL_BRACKETED.sub(" ", text)
    text = _LABEL_BEFORE.sub(" ", text)
    text = _ORPHAN_PUNCTUATION.sub(" ", text)  # what separated the labels that were dropped
    return " ".join(text.split())


def quoted_segments(quote: str) -> list[str]:
    """The parts a quote puts in quotation marks (a model's commentary around them is not document text)."""
    return [m.group(1).strip() for m in _QUOTED.finditer(quote) if m.group(1).strip()]


def _rows_unpiped(text: str) -> str:
    """Markdown table rows (``| a | b | c |``) as their cells joined by spaces; separator rows dropped."""
    lines = []
    for line in text.splitlines():
        if line.count("|") >= _MARKDOWN_ROW_PIPES:
            if set(line.replace("|", "").strip()) <= set("-: "):
                continue
            line = " ".join(cell.strip() for cell in line.split("|") if cell.strip())
        lines.append(line)
    return "\n".join(lines)


def readings(fragment: str) -> list[str]:
    """``fragment`` as written, and without a ``Title:`` prefix (a caption or a column header the model put
    in front, which the row itself does not print)."""
    bare = _PREFIX.sub("", fragment)
    return [fragment, bare] if bare != fragment and len(bare) >= MIN_FRAGMENT_CHARS else [fragment]


def fragments(quote: str) -> list[str]:
    """The printed pieces of ``quote``, in order, each cleaned of annotations, labels and a caption prefix."""
    segments = quoted_segments(quote) or [_rows_unpiped(quote)]
    out: list[str] = []
    for segment in segments:
        for piece in _SPLIT.split(segment):
            piece = _CAPTION_NUMBER.sub("", strip_annotations(piece)).strip(" ,:;.-–")
            if len(piece) < MIN_FRAGMENT_CHARS or piece in out:
                continue
            if out and not _WORD.search(piece):
                out[-1] = f"{out[-1]} {piece}"  # bare numbers and units belong to the label before them
            else:
                out.append(piece)
    return out
