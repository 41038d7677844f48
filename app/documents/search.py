"""Ranked search over the lines of a datasheet: BM25 with unit- and symbol-aware tokens.

Each text line is a document. Its section titles count as a weak extra field, so "supply voltage absolute
maximum" finds the VDD row under "Absolute Maximum Ratings" even though the row never says "absolute". Lines in
a table row that carries values get a small boost (that is where parameters are defined), running
headers/footers a penalty. Postings are stored as flat numpy arrays with precomputed BM25 weights, so a query
is a handful of vectorised additions: well under a millisecond on hundreds of pages.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from app.documents.index import DatasheetIndex, Line, PageInfo
from app.documents.text import collapse_ws, is_decoration, is_value, tokens
from app.documents.toc import SectionLocator

K1 = 1.2
B = 0.6
SECTION_WEIGHT = 0.3
ROW_WEIGHT = 0.6  # the other cells of a table row: "Resistance" and "10 kΩ" sit in different cells
NEIGHBOUR_WEIGHT = 0.3  # the row above (a merged parameter cell) or the adjacent lines of a paragraph
SYNONYM_WEIGHT = 0.5
MAX_CONTEXT_TOKENS = 40
PAGE_REPEAT_FACTOR = 0.85

# Datasheet shorthand a reader types out in full (and the other way round). Deliberately small and generic.
SYNONYMS: dict[str, tuple[str, ...]] = {
    "clock": ("clk", "sck", "sclk"),
    "frequency": ("freq",),
    "temperature": ("temp",),
    "maximum": ("max",),
    "minimum": ("min",),
    "typical": ("typ",),
    "supply": ("vdd", "vcc"),
    "bandwidth": ("bw", "gbw", "gbp"),
    "dissipation": ("pd",),
    "resistance": ("res",),
    "capacitance": ("cap",),
}
VALUE_ROW_BOOST = 1.3
FURNITURE_FACTOR = 0.3
SNIPPET_CHARS = 320

_HYPHEN_END = re.compile(r"([A-Za-z]{2,})-\s*$")
_LOWER_START = re.compile(r"^\s*([a-z]{2,})")


class SearchIndex:
    """BM25 postings in CSR form. Picklable as a few numpy buffers; the vocabulary dict is rebuilt lazily."""

    def __init__(self, vocab: list[str], indptr: np.ndarray, docs: np.ndarray, weights: np.ndarray,
                 doc_page: np.ndarray, doc_line: np.ndarray, doc_row: np.ndarray, boost: np.ndarray,
                 tok_ptr: np.ndarray, tok_ids: np.ndarray):
        self.vocab = vocab
        self.indptr = indptr
        self.docs = docs
        self.weights = weights
        self.doc_page = doc_page
        self.doc_line = doc_line
        self.doc_row = doc_row  # visual row of the line on its page: one hit per row
        self.boost = boost
        # Each line's own tokens as term ids (CSR), for the phrase bonus without decoding any page.
        self.tok_ptr = tok_ptr
        self.tok_ids = tok_ids
        self.sha256: str | None = None  # the document these postings were built from
        self._term_ids: dict[str, int] | None = None

    # -- persistence -------------------------------------------------------------------------------------------
    def __getstate__(self) -> dict[str, Any]:
        state = {k: v for k, v in self.__dict__.items() if k not in ("vocab", "_term_ids")}
        state["vocab"] = "\x00".join(self.vocab)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        vocab = state.pop("vocab")
        self.__dict__.update(state)
        self.vocab = vocab.split("\x00") if vocab else []
        self._term_ids = None

    @property
    def term_ids(self) -> dict[str, int]:
        if self._term_ids is None:
            self._term_ids = {t: i for i, t in enumerate(self.vocab)}
        return self._term_ids

    @property
    def size(self) -> int:
        return int(self.doc_page.shape[0])

    # -- construction ------------------------------------------------------------------------------------------
    @classmethod
    def build(cls, index: DatasheetIndex) -> SearchIndex:
        locator = SectionLocator(index.toc)
        doc_page: list[int] = []
        doc_line: list[int] = []
        doc_row: list[int] = []
        tok_ptr: list[int] = [0]
        tok_ids: list[int] = []
        boost: list[float] = []
        lengths: list[int] = []
        term_ids: dict[str, int] = {}
        post_term: list[int] = []
        post_doc: list[int] = []
        post_tf: list[float] = []
        post_text: list[bool] = []  # False for postings that come from the section field only
        section_cache: dict[str | None, list[int]] = {}
        for page in index.pages:
            value_rows = _value_rows(page)
            lines = page.lines
            rows: dict[int, list[int]] = {}
            for i, ln in enumerate(lines):
                rows.setdefault(ln.row, []).append(i)
            line_tokens = [tokens(ln.text) for ln in lines]
            page_ctx = (line_tokens, rows)
            for li, ln in enumerate(lines):
                toks = list(line_tokens[li])
                joined = _hyphen_join(ln, lines[li + 1] if li + 1 < len(lines) else None)
                if joined:
                    toks.append(joined)
                if not toks:
                    continue
                doc = len(doc_page)
                doc_page.append(page.number)
                doc_line.append(li)
                doc_row.append(ln.row)
                lengths.append(len(toks))
                boost.append(FURNITURE_FACTOR if ln.furniture else (VALUE_ROW_BOOST if ln.row in value_rows else 1.0))
                tf: dict[int, float] = {}
                for t in toks:
                    tid = term_ids.setdefault(t, len(term_ids))
                    tf[tid] = tf.get(tid, 0.0) + 1.0
                    tok_ids.append(tid)
                tok_ptr.append(len(tok_ids))
                text_terms = set(tf)
                for weight, ctx in _context(page, li, page_ctx):
                    for t in ctx:
                        tid = term_ids.setdefault(t, len(term_ids))
                        if tid not in text_terms:
                            tf[tid] = max(tf.get(tid, 0.0), weight)
                section = locator.at(page.number, ln.y0)
                stoks = section_cache.get(section)
                if stoks is None:
                    stoks = [term_ids.setdefault(t, len(term_ids)) for t in set(tokens(section))] if section else []
                    section_cache[section] = stoks
                for tid in stoks:
                    tf[tid] = tf.get(tid, 0.0) + SECTION_WEIGHT
                for tid, f in tf.items():
                    post_term.append(tid)
                    post_doc.append(doc)
                    post_tf.append(f)
                    post_text.append(tid in text_terms)
        vocab = [""] * len(term_ids)
        for t, i in term_ids.items():
            vocab[i] = t
        n_docs = len(doc_page)
        terms = np.asarray(post_term, dtype=np.int64)
        docs = np.asarray(post_doc, dtype=np.int32)
        tfs = np.asarray(post_tf, dtype=np.float64)
        # Document frequency counts the line text only, so a word in a long section title stays discriminative.
        df = np.bincount(terms[np.asarray(post_text, dtype=bool)], minlength=len(vocab)).astype(np.float64)
        df = np.maximum(df, 1.0)
        idf = np.log1p((n_docs - df + 0.5) / (df + 0.5))
        lens = np.asarray(lengths, dtype=np.float64)
        avgdl = float(lens.mean()) if n_docs else 1.0
        norm = K1 * (1 - B + B * lens[docs] / avgdl) if n_docs else np.zeros(0)
        weights = idf[terms] * tfs * (K1 + 1) / (tfs + norm)
        order = np.argsort(terms, kind="stable")
        indptr = np.zeros(len(vocab) + 1, dtype=np.int64)
        np.cumsum(np.bincount(terms, minlength=len(vocab)), out=indptr[1:])
        built = cls(vocab, indptr, docs[order], weights[order].astype(np.float32),
                    np.asarray(doc_page, dtype=np.int32), np.asarray(doc_line, dtype=np.int32),
                    np.asarray(doc_row, dtype=np.int32), np.asarray(boost, dtype=np.float32),
                    np.asarray(tok_ptr, dtype=np.int64), np.asarray(tok_ids, dtype=np.int32))
        built.sha256 = index.sha256
        return built

    # -- querying ----------------------------------------------------------------------------------------------
    def score(self, query: str, page: int | None = None) -> tuple[np.ndarray, list[str]]:
        """Scores of every line for one query (0 where nothing matched), and the query terms used."""
        qterms = list(dict.fromkeys(tokens(query)))
        scores = np.zeros(self.size, dtype=np.float32)
        if not qterms or not self.size:
            return scores, qterms
        matched = np.zeros(self.size, dtype=np.float32)
        known = 0
        for t in qterms:
            group_hit = np.zeros(self.size, dtype=bool)
            for term, weight in ((t, 1.0), *((s, SYNONYM_WEIGHT) for s in SYNONYMS.get(t, ()))):
                tid = self.term_ids.get(term)
                if tid is None or term in qterms and term != t:
                    continue
                known += 1
                lo, hi = self.indptr[tid], self.indptr[tid + 1]
                d = self.docs[lo:hi]
                scores[d] += weight * self.weights[lo:hi]
                group_hit[d] = True
            matched += group_hit
        if not known:
            return scores, qterms
        coverage = matched / len(qterms)
        scores *= (0.25 + 0.75 * coverage) * self.boost
        if page is not None:
            scores[self.doc_page != page] = 0.0
        return scores, qterms


def run_query(index: DatasheetIndex, queries: list[str], max_hits: int, page: int | None) -> tuple[list[dict], int]:
    """Ranked hits (one per visual row) for one or several queries; returns (hits, number of matching lines)."""
    search: SearchIndex | None = index.search_data
    if search is None or getattr(search, "sha256", None) != index.sha256:
        # An index assembled or altered elsewhere (dataclasses.replace) must not search another document's lines.
        search = index.memo("search", lambda: SearchIndex.build(index))
    total = np.zeros(search.size, dtype=np.float32)
    per_query: list[tuple[str, list[str], np.ndarray]] = []
    for q in queries:
        scores, qterms = search.score(q, page)
        per_query.append((q, qterms, scores))
        total += scores
    candidates = np.flatnonzero(total > 0)
    if not candidates.size:
        return [], 0
    # Phrase bonus on the strongest candidates only: query words adjacent and in order on the line.
    size = min(candidates.size, max(30, 3 * max_hits))
    top = candidates[np.argpartition(-total[candidates], size - 1)[:size]] if candidates.size > size else candidates
    pool = top[np.argsort(-total[top], kind="stable")]
    query_ids = [[search.term_ids.get(t, -1) for t in qterms] for _q, qterms, _s in per_query]
    rescored: list[tuple[float, int]] = []
    for doc in pool:
        doc = int(doc)
        line_ids = search.tok_ids[search.tok_ptr[doc]: search.tok_ptr[doc + 1]].tolist()
        bonus = 0.0
        for (_q, qterms, scores), ids in zip(per_query, query_ids, strict=True):
            if scores[doc] > 0 and len(qterms) > 1:
                bonus += _phrase_fraction(ids, line_ids) * 0.35 * float(scores[doc])
        rescored.append((float(total[doc]) + bonus, doc))
    rescored.sort(key=lambda t: (-t[0], t[1]))
    # One hit per visual row, and a mild penalty for each further hit on the same page, so the first hits show
    # the different places a parameter is stated rather than five lines of one page.
    best: dict[tuple[int, int], tuple[float, int]] = {}
    for score, doc in rescored:
        key = (int(search.doc_page[doc]), int(search.doc_row[doc]))
        if key not in best:
            best[key] = (score, doc)
    per_page: dict[int, int] = {}
    diversified: list[tuple[float, int]] = []
    for score, doc in sorted(best.values(), key=lambda t: (-t[0], t[1])):
        p = int(search.doc_page[doc])
        diversified.append((score * PAGE_REPEAT_FACTOR ** per_page.get(p, 0), doc))
        per_page[p] = per_page.get(p, 0) + 1
    diversified.sort(key=lambda t: (-t[0], t[1]))
    locator = index.memo("section_locator", lambda: SectionLocator(index.toc))
    hits: list[dict] = []
    for score, doc in diversified:
        p, li = int(search.doc_page[doc]), int(search.doc_line[doc])
        page_info = index.pages[p - 1]
        ln = page_info.lines[li]
        matched = [q for q, _t, s in per_query if s[doc] > 0]
        hit = {
            "page": p,
            "text": collapse_ws(ln.text),
            "snippet": snippet(index, page_info, li),
            "section": locator.at(p, ln.y0),
            "bbox": ln.bbox,
            "score": round(score, 3),
            "in_table": ln.region >= 0,
        }
        if len(queries) > 1:
            hit["matched_queries"] = matched
        hits.append(hit)
        if len(hits) >= max_hits:
            break
    return hits, int(candidates.size)


def _context(page: PageInfo, li: int, page_ctx: tuple[list[list[str]], dict[int, list[int]]]
             ) -> list[tuple[float, list[str]]]:
    """Tokens near a line that describe it: its table row (and the row above, where a merged parameter cell
    usually sits), or for running text the lines before and after it in the same block."""
    line_tokens, rows = page_ctx
    lines = page.lines
    ln = lines[li]
    out: list[tuple[float, list[str]]] = []
    if ln.region >= 0:
        members = [i for i in rows.get(ln.row, ()) if lines[i].region == ln.region]
        mates = [t for i in members if i != li for t in line_tokens[i]]
        out.append((ROW_WEIGHT, mates[:MAX_CONTEXT_TOKENS]))
        region_left = page.table_regions[ln.region][0] if ln.region < len(page.table_regions) else 0.0
        if min(lines[i].x0 for i in members) <= region_left + 15:
            return out  # the row names itself in its first column
        for r in range(ln.row - 1, max(ln.row - 4, -1), -1):
            above = [t for i in rows.get(r, ()) if lines[i].region == ln.region for t in line_tokens[i]]
            if above:
                out.append((NEIGHBOUR_WEIGHT, above[:MAX_CONTEXT_TOKENS]))
                break
    else:
        for j in (li - 1, li + 1):
            if 0 <= j < len(lines) and lines[j].block == ln.block and lines[j].region < 0:
                out.append((NEIGHBOUR_WEIGHT, line_tokens[j][:MAX_CONTEXT_TOKENS]))
    return out


def _phrase_fraction(qterms: list[int], line_toks: list[int]) -> float:
    pairs = [p for p in zip(qterms, qterms[1:], strict=False) if -1 not in p]
    if not pairs:
        return 0.0
    present = set(zip(line_toks, line_toks[1:], strict=False))
    return sum(1 for p in pairs if p in present) / len(pairs)


def _value_rows(page: PageInfo) -> set[int]:
    """Visual rows (inside a table region) that hold at least one value cell."""
    rows: set[int] = set()
    for ln in page.lines:
        if ln.region >= 0 and is_value(ln.text):
            rows.add(ln.row)
    return rows


def _hyphen_join(ln: Line, nxt: Line | None) -> str | None:
    if nxt is None or nxt.block != ln.block:
        return None
    m, n = _HYPHEN_END.search(ln.text), _LOWER_START.match(nxt.text)
    if not (m and n):
        return None
    joined = tokens(m.group(1) + n.group(1))
    return joined[0] if joined else None


def _row_members(index: DatasheetIndex, page: PageInfo) -> dict[int, list[int]]:
    def factory() -> dict[int, list[int]]:
        rows: dict[int, list[int]] = {}
        for i, ln in enumerate(page.lines):
            rows.setdefault(ln.row, []).append(i)
        for members in rows.values():
            members.sort(key=lambda i: page.lines[i].x0)
        return rows

    return index.memo(f"rows:{page.number}", factory)


def snippet(index: DatasheetIndex, page: PageInfo, li: int) -> str:
    """The line in context, one visual row per text line ("\n" between rows): inside a table, the line's whole
    row and the next one, so the row's values (and an interleaved second condition row) are visible; elsewhere
    the line's row and the next line. Cells are joined by single spaces, as a whitespace-collapsed text layer
    reads, so a row often quotes back verbatim against the page text."""
    lines = page.lines
    ln = lines[li]
    rows = _row_members(index, page)
    if ln.region >= 0:
        parts = [_row_text(page, rows.get(ln.row, [li]), ln.region)]
        for r in range(ln.row + 1, ln.row + 4):
            members = [i for i in rows.get(r, []) if lines[i].region == ln.region]
            if members:
                parts.append(_row_text(page, members, ln.region))
                break
        return _clip("\n".join(parts))
    mates = [i for i in rows.get(ln.row, [li]) if i == li or not is_decoration(lines[i].text)]
    core = collapse_ws(ln.text)
    if 1 < len(mates) <= 6:
        joined = " ".join(collapse_ws(lines[i].text) for i in mates)
        if len(joined) <= 160:
            core = joined
    nxt = _next_line(lines, li)
    return _clip(f"{core}\n{collapse_ws(lines[nxt].text)}" if nxt is not None else core)


def _row_text(page: PageInfo, members: list[int], region: int) -> str:
    return " ".join(collapse_ws(page.lines[i].text) for i in members
                    if page.lines[i].region == region and not is_decoration(page.lines[i].text))


def _next_line(lines: list[Line], li: int) -> int | None:
    ln = lines[li]
    for j in range(li + 1, min(li + 6, len(lines))):
        cand = lines[j]
        if cand.furniture or cand.row == ln.row or is_decoration(cand.text):
            continue
        if cand.y0 >= ln.y0 and cand.y0 - ln.y1 < 2.5 * max(ln.y1 - ln.y0, 1.0):
            return j
    return None


def _clip(text: str) -> str:
    return text if len(text) <= SNIPPET_CHARS else text[: SNIPPET_CHARS - 1].rstrip() + "…"
