"""The review dashboard's HTML routes, through the ASGI app: queue order and filters, the item page's
evidence, the highlighted page image, span payloads, and decisions made from the form."""

from __future__ import annotations

import re
from datetime import timedelta
from html import unescape

import pymupdf
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import event

from app.dashboard import views
from app.dashboard.views import DEFAULT_DPI, QueueFilters, neighbours
from app.db import get_engine, session_scope
from app.documents import store
from app.documents.render import render_png
from app.review import decisions
from app.review.models import Decision, Flag
from app.tables.jobs import Extraction, Job
from app.timeutil import utcnow
from tests.support.dashboard_seed import DATASHEET, SeededRun, seed_flagged_run
from tests.support.live import seed_flagged_extraction
from tests.support.paths import datasheet


@pytest.fixture
def client(dsx_env, datasheets_dir) -> TestClient:  # noqa: ANN001
    from app.main import create_app

    return TestClient(create_app(), follow_redirects=False)


def rows(client: TestClient, **params: str) -> list[int]:
    response = client.get("/review", params=params)
    assert response.status_code == 200, response.text
    return [int(i) for i in re.findall(r'<tr class="queue-row[^"]*" data-href="[^"]*" data-item-id="(\d+)"',
                                       response.text)]


def test_queue_lists_newest_first_with_counts_per_rule(client: TestClient) -> None:
    old = seed_flagged_run(created_at=utcnow() - timedelta(days=3), rule="tool_bypass", severity="error")
    mid = seed_flagged_run(created_at=utcnow() - timedelta(hours=2), parameter="Gain")
    new = seed_flagged_run(parameter="Quiescent current")
    assert rows(client) == [new.extraction_id, mid.extraction_id, old.extraction_id]

    html = client.get("/review").text
    counts = dict(re.findall(r'data-rule="([^"]+)">[^<]*<b>(\d+)</b>', html))
    assert counts == {"tool_bypass": "1", "verification_skipped": "2"}
    assert 'data-testid="queue-total">3<' in html


def test_queue_filters_by_rule_job_model_age_and_status(client: TestClient) -> None:
    old = seed_flagged_run(created_at=utcnow() - timedelta(days=3), rule="tool_bypass", severity="error",
                           model="gpt-test")
    new = seed_flagged_run(parameter="Quiescent current")
    assert rows(client, rule="tool_bypass") == [old.extraction_id]
    assert rows(client, job=new.job_id) == [new.extraction_id]
    assert rows(client, model="gpt-test") == [old.extraction_id]
    assert rows(client, age="24h") == [new.extraction_id]
    assert rows(client, age="7d") == [new.extraction_id, old.extraction_id]
    assert rows(client, age="24h", rule="tool_bypass") == []
    # Counts under the age filter still show every rule of the recent items, whatever rule is selected.
    html = client.get("/review", params={"age": "24h", "rule": "tool_bypass"}).text
    assert dict(re.findall(r'data-rule="([^"]+)">[^<]*<b>(\d+)</b>', html)) == {"verification_skipped": "1"}
    assert 'data-testid="queue-empty"' in html
    assert rows(client, status="decided") == []
    assert client.get("/review", params={"status": "bogus"}).status_code == 422


def test_item_page_shows_request_answer_flags_evidence_and_timeline(client: TestClient) -> None:
    run = seed_flagged_run()
    response = client.get(f"/review/items/{run.extraction_id}")
    assert response.status_code == 200
    html = unescape(response.text)
    assert "Supply voltage" in html and run.quote in html
    assert "never cross-checked the value" in html
    # Every evidence link points at a row of the waterfall.
    links = re.findall(r'href="#span-([0-9a-f]+)" class="span-link"', html)
    assert links == [run.spans["tool"], run.spans["submit"]]
    rows_ids = re.findall(r'<details class="wf-row[^"]*"\s+id="span-([0-9a-f]+)"', html)
    assert set(links) <= set(rows_ids) and len(rows_ids) == 5
    assert rows_ids[0] == run.spans["root"]  # the agent span first, its calls under it
    assert "3800 in / 130 out tokens" in html and "$0.0064" in html
    assert "not cross-checked · the model's reasoning" in html and 'data-testid="legend"' in html
    assert 'data-state="grounded"' in html and f"Quote found on page {run.page}" in html
    assert f'src="/review/items/{run.extraction_id}/page.png?page={run.page}"' in html
    assert 'data-boxes="1"' in html
    assert 'src="http' not in html and 'href="http' not in html  # no external assets


def test_item_page_lists_other_variants_and_one_sided_values(client: TestClient) -> None:
    run = seed_flagged_run(parameter="Dropout voltage")
    with session_scope() as session:
        extraction = session.get(Extraction, run.extraction_id)
        extraction.values = [{"min": None, "typical": None, "max": 300.0, "unit": "mV", "conditions": ["IOUT = 300 mA"],
                              "other_variants": [{"label": "IOUT = 100 mA", "typical": 60.0, "max": 110.0,
                                                  "unit": "mV"}]}]
    html = unescape(client.get(f"/review/items/{run.extraction_id}").text)
    variants = html[html.index('data-testid="other-variants"'):]
    assert "IOUT = 100 mA: 60 … 110 mV" not in variants and "IOUT = 100 mA: ≤ 110 (typ 60) mV" in variants
    assert "≤ 300 mV" in html and "∞" not in html


def test_item_page_states_when_the_quote_is_not_in_the_document(client: TestClient) -> None:
    run = seed_flagged_run(quote_found=False, rule="tool_bypass", severity="error")
    html = client.get(f"/review/items/{run.extraction_id}").text
    assert 'data-state="not_found"' in html
    assert "Quote not found in this document" in html
    assert 'data-boxes="0"' in html


def test_unknown_item_is_a_404_page(client: TestClient) -> None:
    response = client.get("/review/items/999")
    assert response.status_code == 404
    assert "text/html" in response.headers["content-type"] and "Back to the review queue" in response.text


def _pixmap(png: bytes) -> pymupdf.Pixmap:
    return pymupdf.Pixmap(png)


def _changed_pixels(a: pymupdf.Pixmap, b: pymupdf.Pixmap) -> list[tuple[int, int]]:
    assert (a.width, a.height, a.n) == (b.width, b.height, b.n)
    n, changed = a.n, []
    sa, sb = a.samples, b.samples
    for y in range(0, a.height, 2):
        for x in range(0, a.width, 2):
            i = (y * a.width + x) * n
            if sa[i:i + n] != sb[i:i + n]:
                changed.append((x, y))
    return changed


def test_page_image_highlights_exactly_the_grounded_boxes(client: TestClient, dsx_env) -> None:  # noqa: ANN001
    run = seed_flagged_run()
    response = client.get(f"/review/items/{run.extraction_id}/page.png")
    assert response.status_code == 200 and response.headers["content-type"] == "image/png"
    highlighted = _pixmap(response.content)
    sha = store.sha256_of(datasheet(DATASHEET).read_bytes())
    plain = _pixmap(render_png(store.blob_path(sha), run.page, boxes=[], dpi=DEFAULT_DPI)[0])
    changed = _changed_pixels(plain, highlighted)
    assert changed, "the highlight changed nothing"
    scale = DEFAULT_DPI / 72
    x0, y0, x1, y1 = (c * scale for c in run.boxes[0])
    inside = [p for p in changed if x0 - 3 <= p[0] <= x1 + 3 and y0 - 3 <= p[1] <= y1 + 3]
    assert len(inside) == len(changed), "pixels changed outside the grounded box"
    assert len(inside) > 0.3 * ((x1 - x0) * (y1 - y0)) / 4  # most of the box is tinted (every 2nd pixel sampled)

    other = client.get(f"/review/items/{run.extraction_id}/page.png", params={"page": 1 if run.page != 1 else 2})
    assert other.status_code == 200
    assert client.get(f"/review/items/{run.extraction_id}/page.png", params={"page": 999}).status_code == 404


def test_span_payload_fragment_holds_the_full_input_and_output(client: TestClient) -> None:
    run = seed_flagged_run()
    fragment = unescape(client.get(f"/review/items/{run.extraction_id}/spans/{run.spans['chat1']}").text)
    assert '<parameter_request>{\\"name\\": \\"Supply voltage\\"' in fragment
    assert '"build_datasheet"' in fragment
    other = seed_flagged_run(parameter="Gain")
    # A span of another run is not served through this item.
    assert client.get(f"/review/items/{run.extraction_id}/spans/{other.spans['chat1']}").status_code == 404


def _decide(client: TestClient, run: SeededRun, query: str = "", **form: str):
    return client.post(f"/review/items/{run.extraction_id}/decision{query}", data=form)


def test_approving_moves_to_the_next_item_and_leaves_the_queue(client: TestClient) -> None:
    first = seed_flagged_run(created_at=utcnow() - timedelta(hours=1))
    second = seed_flagged_run(parameter="Gain")
    html = client.get(f"/review/items/{second.extraction_id}").text
    assert re.search(rf'name="next" value="{first.extraction_id}"', html)

    response = _decide(client, second, decision="approve", reviewer="ana", comment="matches page",
                       next=str(first.extraction_id))
    assert response.status_code == 303
    assert response.headers["location"] == f"/review/items/{first.extraction_id}?done={second.extraction_id}"
    assert rows(client) == [first.extraction_id]
    assert "dsx_reviewer=ana" in response.headers["set-cookie"]

    reviews = client.get("/v1/reviews").json()["items"]
    assert [(r["extraction_id"], r["decision"], r["reviewer"], r["comment"]) for r in reviews] == [
        (second.extraction_id, "approve", "ana", "matches page")]
    result = client.get(f"/v1/jobs/{second.job_id}").json()["results"][0]
    assert result["review"]["decision"] == "approve" and result["review"]["reviewer"] == "ana"
    landed = client.get(response.headers["location"]).text
    assert 'data-testid="decided-notice"' in landed and "approve" in landed


def test_correction_is_stored_with_its_value_and_page(client: TestClient) -> None:
    run = seed_flagged_run()
    response = _decide(client, run, "?status=all", decision="correct", reviewer="bo", value_min="4", value_max="12",
                       unit="V", page=str(run.page), conditions="TA = 25 °C; RL = 8 Ω", quote=run.quote)
    assert response.status_code == 303
    assert response.headers["location"] == f"/review?status=all&done={run.extraction_id}"
    decision = client.get("/v1/reviews").json()["items"][0]
    assert decision["decision"] == "correct"
    assert decision["correction"]["values"] == [{"min": 4.0, "typical": None, "max": 12.0, "unit": "V",
                                                 "conditions": ["TA = 25 °C", "RL = 8 Ω"]}]
    assert decision["correction"]["source_page"] == run.page
    assert rows(client, status="decided") == [run.extraction_id]
    claims = client.get("/v1/review/corrections.yaml").text
    assert "max: 12.0" in claims


def test_invalid_correction_is_explained_and_nothing_is_stored(client: TestClient) -> None:
    run = seed_flagged_run()
    response = _decide(client, run, decision="correct", value_min="", value_typical="", value_max="", unit="V")
    assert response.status_code == 422
    assert 'data-testid="form-error"' in response.text and "at least one of min, typical, max" in response.text
    response = _decide(client, run, decision="correct", value_typical="about three")
    assert response.status_code == 422 and "must be a number" in unescape(response.text)
    assert client.get("/v1/reviews").json()["total"] == 0
    assert rows(client) == [run.extraction_id]


def test_neighbours_follow_the_filtered_queue(client: TestClient) -> None:
    a = seed_flagged_run(created_at=utcnow() - timedelta(hours=3), rule="tool_bypass", severity="error")
    b = seed_flagged_run(created_at=utcnow() - timedelta(hours=2), parameter="Gain")
    c = seed_flagged_run(parameter="Quiescent current", rule="tool_bypass", severity="error")
    html = client.get(f"/review/items/{b.extraction_id}").text
    assert f'href="/review/items/{c.extraction_id}" data-nav="prev"' in html
    assert f'href="/review/items/{a.extraction_id}" data-nav="next"' in html
    assert ">2 of 3<" in html
    narrowed = client.get(f"/review/items/{c.extraction_id}", params={"rule": "tool_bypass"}).text
    assert f'href="/review/items/{a.extraction_id}?rule=tool_bypass" data-nav="next"' in narrowed
    assert ">1 of 2<" in narrowed


RULES = ("tool_bypass", "verification_skipped", "quote_not_found")
MODELS = ("offline/datasheet-reader", "gpt-test")


def seed_varied_queue(count: int) -> list[int]:
    """``count`` flagged answers in the shapes the queue has to sort out, created two by two (so ties on the
    creation time are broken by id) over about ``count`` hours: one or two rules, flags on the answer or on its
    parameter, info-only flags, superseding attempts, cross-check answers, decided items, a model alias on the
    job, another tenant. Returns every extraction id created, queued or not."""
    now = utcnow()
    created: list[int] = []
    with session_scope() as session:
        for i in range(count):
            rule = RULES[i % 3]
            flags = [(rule, "error" if i % 2 else "warning")]
            if i % 5 == 0:
                flags.append((RULES[(i + 1) % 3], "warning"))
            if i % 7 == 3:
                flags = [(rule, "info")]
            on_parameter = i % 4 == 1
            extraction = seed_flagged_extraction(session, parameter=f"P{i}", flags=[] if on_parameter else flags,
                                                 tenant="acme" if i % 9 == 5 else "default", model=MODELS[i % 2])
            extraction.created_at = now - timedelta(hours=2 * (i // 2), minutes=30)
            job = session.get(Job, extraction.job_id)
            if i % 5 == 2:
                job.model = "fast"
            if on_parameter:
                session.add_all(Flag(job_id=job.id, parameter_id=extraction.parameter_id, extraction_id=None,
                                     rule=name, rule_version="1", severity=severity, message="x", evidence={})
                                for name, severity in flags)
            if i % 8 == 4:
                session.add(Decision(job_id=job.id, extraction_id=extraction.id, decision="approve",
                                     reviewer="ana", tenant=job.tenant))
            created.append(extraction.id)
            later: list[tuple[str, int, bool]] = []  # (role, attempt, flagged itself)
            if i % 6 == 2:  # a retry supersedes the first answer; only some retries carry a flag of their own
                later.append(("primary", 2, i % 12 == 2))
            if i % 10 == 7:  # the reader's second opinion: flagged, never a queue item
                later.append(("cross_check", 1, True))
            for role, attempt, flagged in later:
                other = Extraction(job_id=job.id, parameter_id=extraction.parameter_id, attempt=attempt, role=role,
                                   model=extraction.model, engine="agentic", found=True, values=[],
                                   created_at=extraction.created_at + timedelta(minutes=1))
                session.add(other)
                session.flush()
                if flagged:
                    session.add(Flag(job_id=job.id, parameter_id=extraction.parameter_id, extraction_id=other.id,
                                     rule=rule, rule_version="1", severity="error", message="x", evidence={}))
                created.append(other.id)
            session.flush()
    return created


def queue_listing(client: TestClient, params: dict[str, str]) -> list[int]:
    """The queue exactly as its pages list it, page after page."""
    listed: list[int] = []
    page = 1
    while True:
        ids = rows(client, **params, page=str(page))
        listed += ids
        if len(ids) < views.PAGE_SIZE:
            return listed
        page += 1


def walked(listing: list[int], extraction_id: int) -> tuple[int | None, int | None, int | None, int]:
    """(position, previous, next, total) of an item, by walking the listing."""
    if extraction_id not in listing:
        return None, None, None, len(listing)
    at = listing.index(extraction_id)
    return (at + 1, listing[at - 1] if at > 0 else None, listing[at + 1] if at + 1 < len(listing) else None,
            len(listing))


def test_neighbours_of_every_item_match_a_walk_of_the_queue_pages(client: TestClient,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(views, "PAGE_SIZE", 7)  # walks cross page boundaries under every filter
    extraction_ids = seed_varied_queue(56)
    with session_scope() as session:
        some_job = session.get(Extraction, queue_listing(client, {})[3]).job_id
    filter_sets = [{}, {"rule": "tool_bypass"}, {"rule": "verification_skipped", "age": "24h"},
                   {"model": "gpt-test"}, {"model": "fast", "status": "all"}, {"age": "24h"}, {"status": "decided"},
                   {"status": "all", "rule": "quote_not_found"}, {"status": "all"}, {"job": some_job}]
    for params in filter_sets:
        listing = queue_listing(client, params)
        assert listing, params
        with session_scope() as session:
            for extraction_id in extraction_ids:
                place = neighbours(session, "default", QueueFilters(**params), extraction_id)
                found = (place.position, place.previous, place.next, place.total)
                assert found == walked(listing, extraction_id), (params, extraction_id)

    # The item pages link the same neighbours, so j/k walks the list the queue page shows.
    for params in ({}, {"rule": "tool_bypass", "age": "24h"}):
        listing = queue_listing(client, params)
        query = QueueFilters(**params).query()
        for extraction_id in listing:
            html = unescape(client.get(f"/review/items/{extraction_id}", params=params).text)
            position, previous, following, total = walked(listing, extraction_id)
            assert f">{position} of {total}<" in html
            links = {nav: target for target, nav in re.findall(r'href="/review/items/([^"]+)" data-nav="(\w+)"',
                                                               html)}
            assert links == {nav: f"{target}{query}" for nav, target in (("prev", previous), ("next", following))
                             if target is not None}
            assert f'name="next" value="{following or ""}"' in html


def test_neighbour_lookup_issues_the_same_statements_for_a_short_and_a_long_queue(
    client: TestClient, monkeypatch: pytest.MonkeyPatch,
) -> None:
    filter_sets = (QueueFilters(), QueueFilters(rule="tool_bypass", age="7d"), QueueFilters(status="all"))

    def no_listing(*_args, **_kwargs):  # noqa: ANN002, ANN003, ANN202
        raise AssertionError("the neighbour lookup must not list the queue")

    def statements_per_lookup() -> list[int]:
        """SQL statements run to place the middle item of the queue, under each filter set."""
        listings = [queue_listing(client, filters.params()) for filters in filter_sets]
        statements: list[str] = []
        counts = []

        def record(_conn, _cursor, statement, *_args) -> None:  # noqa: ANN001
            statements.append(statement)

        with monkeypatch.context() as patched, session_scope() as session:
            patched.setattr(decisions, "review_queue", no_listing)
            patched.setattr(decisions, "_queue_items", no_listing)
            event.listen(get_engine(), "before_cursor_execute", record)
            try:
                for filters, listing in zip(filter_sets, listings, strict=True):
                    middle = len(listing) // 2
                    statements.clear()
                    place = neighbours(session, "default", filters, listing[middle])
                    assert (place.position, place.total) == (middle + 1, len(listing))
                    counts.append(len(statements))
            finally:
                event.remove(get_engine(), "before_cursor_execute", record)
        return counts

    seed_varied_queue(10)
    short = statements_per_lookup()
    seed_varied_queue(50)
    assert statements_per_lookup() == short
    assert max(short) <= 4


def test_static_assets_are_served_locally(client: TestClient) -> None:
    for name in ("htmx.min.js", "review.js", "review.css"):
        response = client.get(f"/review/static/{name}")
        assert response.status_code == 200 and len(response.content) > 1000, name


def test_document_and_model_text_is_escaped(client: TestClient) -> None:
    """Quotes, reasons and tool outputs come from datasheets and models: they are shown, never run."""
    run = seed_flagged_run()
    hostile = '<img src=x onerror="document.title=1">'
    with session_scope() as session:
        extraction = session.get(Extraction, run.extraction_id)
        extraction.quote = hostile
        extraction.reason = hostile
    html = client.get(f"/review/items/{run.extraction_id}").text
    assert hostile not in html and "&lt;img src=x onerror=" in html


def test_a_run_without_a_dispatch_record_says_so(client: TestClient) -> None:
    run = seed_flagged_run()
    with session_scope() as session:
        session.get(Extraction, run.extraction_id).trace_id = None
    html = client.get(f"/review/items/{run.extraction_id}").text
    assert 'data-testid="no-trace"' in html and 'class="wf-row' not in html
    assert client.get(f"/review/items/{run.extraction_id}/spans/{run.spans['chat1']}").status_code == 404


def test_highlight_lands_on_the_text_of_a_rotated_page(tmp_path) -> None:  # noqa: ANN001
    path = tmp_path / "rotated.pdf"
    document = pymupdf.open()
    document.new_page(width=595, height=842).insert_text((100, 100), "Supply voltage 2.7 V", fontsize=20)
    document[0].set_rotation(90)
    document.save(path)
    with pymupdf.open(path) as reopened:
        box = list(reopened[0].get_text("words")[0][:4])

    def ink(png: bytes, tinted: bool) -> tuple[int, int, int, int]:
        """Bounding box of the highlight's tint, or of the dark (text) pixels."""
        pixmap = _pixmap(png)
        points = []
        for y in range(0, pixmap.height, 2):
            for x in range(0, pixmap.width, 2):
                r, g, b = pixmap.pixel(x, y)[:3]
                if (r > 200 and g > 150 and r - b > 50) if tinted else r < 100:
                    points.append((x, y))
        xs, ys = [p[0] for p in points], [p[1] for p in points]
        return min(xs), min(ys), max(xs), max(ys)

    text = ink(render_png(path, 1, boxes=[], dpi=72)[0], tinted=False)
    mark = ink(render_png(path, 1, boxes=[box], dpi=72)[0], tinted=True)
    # The tinted area covers the first word where the rotated page shows it.
    assert mark[0] <= text[0] + 2 and mark[2] >= text[2] - 2
    assert mark[1] <= text[1] + 2 and text[1] < mark[3] < text[3]
