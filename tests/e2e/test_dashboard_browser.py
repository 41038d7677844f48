"""The review dashboard in headless Chromium against a live dsx server (uvicorn subprocess).

Flagged runs are seeded into the server's database on a real shared datasheet; the browser then does
what a reviewer does: finds the run in the queue, reads the highlighted source page and the evidence
spans, decides with the keyboard, and the decision is checked through the JSON API. Screenshots of the
queue and of an item page are saved under ``test-artifacts/dashboard/``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path

import httpx
import pytest
import yaml

from app.config import reset_settings
from app.db import reset_engines
from app.tables.jobs import Extraction
from app.timeutil import utcnow
from tests.support.dashboard_seed import DATASHEET, SeededRun, quotable_line, seed_flagged_run
from tests.support.live import LiveServer, live_server
from tests.support.paths import REPO_ROOT, datasheet
from tests.support.prefix_proxy import HTTPPrefixProxy
from tests.support.prerequisites import missing_prerequisite
from tests.support.processes import wait_until
from tests.support.scripted_llm import ScriptedLLM, submit

pytestmark = pytest.mark.e2e

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
VIEWPORT = {"width": 1280, "height": 800}
ARTIFACTS = REPO_ROOT / "test-artifacts" / "dashboard"
TIMEOUT_MS = 15_000

# Share of the grounded box's pixels that the browser shows tinted by the highlight, and the same share in a
# band of the page just below it (text and white paper, no highlight).
HIGHLIGHT_SHARE_JS = """
(img) => {
  const boxes = JSON.parse(img.dataset.boxList);
  const scale = img.naturalWidth / parseFloat(img.dataset.pageWidth);
  const canvas = document.createElement("canvas");
  canvas.width = img.naturalWidth; canvas.height = img.naturalHeight;
  const ctx = canvas.getContext("2d");
  ctx.drawImage(img, 0, 0);
  function share(x0, y0, x1, y1) {
    const w = Math.max(1, Math.round((x1 - x0) * scale)), h = Math.max(1, Math.round((y1 - y0) * scale));
    const data = ctx.getImageData(Math.round(x0 * scale), Math.round(y0 * scale), w, h).data;
    let tinted = 0;
    for (let i = 0; i < data.length; i += 4) {
      const [r, g, b] = [data[i], data[i + 1], data[i + 2]];
      if (r > 200 && g > 150 && r - b > 50) { tinted += 1; }
    }
    return tinted / (data.length / 4);
  }
  const [x0, y0, x1, y1] = boxes[0];
  const height = y1 - y0;
  return {inside: share(x0, y0, x1, y1), below: share(x0, y1 + 2 * height, x1, y1 + 3 * height),
          boxes: boxes.length, natural: img.naturalWidth};
}
"""


def _require_chromium() -> None:
    if CHROMIUM.exists():
        return
    missing_prerequisite(f"{CHROMIUM} missing (apt-get install chromium)")


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    _require_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        try:
            yield chromium
        finally:
            chromium.close()


@contextmanager
def _pointed_at(live: LiveServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[LiveServer]:
    """This process's settings on the live server's data dir, so seeding and reading hit its database."""
    monkeypatch.setenv("DSX_DATA_DIR", str(live.data_dir))
    reset_settings()
    reset_engines()
    try:
        yield live
    finally:
        reset_engines()
        reset_settings()


def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in list(os.environ):
        if key.startswith("DSX_") and key != "DSX_SHARED_DIR" and not key.startswith("DSX_TEST_"):
            monkeypatch.delenv(key, raising=False)


@pytest.fixture
def server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, datasheets_dir: Path) -> Iterator[LiveServer]:
    """An API-only live server, for runs seeded straight into its database."""
    _clean_environment(monkeypatch)
    with live_server(tmp_path, worker=False) as live, _pointed_at(live, monkeypatch):
        yield live


@pytest.fixture
def page(browser) -> Iterator[object]:  # noqa: ANN001
    """A 1280x800 page that records every request it makes and every error (the dashboard works offline)."""
    context = browser.new_context(viewport=VIEWPORT)
    context.set_default_timeout(TIMEOUT_MS)
    tab = context.new_page()
    tab.requested = []
    tab.on("request", lambda request: tab.requested.append(request.url))
    tab.console_errors = []
    tab.failed = []
    tab.on("response", lambda response: response.status >= 400 and tab.failed.append((response.status, response.url)))
    tab.on("console", lambda message: message.type == "error" and tab.console_errors.append(message.text))
    tab.on("pageerror", lambda error: tab.console_errors.append(str(error)))
    try:
        yield tab
    finally:
        context.close()


def _screenshot(page, name: str) -> Path:  # noqa: ANN001
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / name
    page.screenshot(path=str(path))
    return path


def _row(page, run: SeededRun):  # noqa: ANN001, ANN202
    return page.locator(f'tr.queue-row[data-item-id="{run.extraction_id}"]')


def _only_local(page, server: LiveServer) -> None:  # noqa: ANN001
    foreign = [url for url in page.requested if not url.startswith(server.base_url) and not url.startswith("data:")]
    assert not foreign, f"requests left the server: {foreign}"
    assert not page.failed, page.failed
    assert not page.console_errors, page.console_errors


def test_flagged_run_is_reviewed_and_approved_in_the_browser(page, server: LiveServer) -> None:  # noqa: ANN001
    missing = seed_flagged_run(parameter="Quiescent current", rule="tool_bypass", severity="error",
                               quote_found=False, created_at=utcnow() - timedelta(hours=2))
    grounded = seed_flagged_run()

    page.goto(f"{server.base_url}/review")
    assert page.locator("tr.queue-row").count() == 2
    assert page.get_attribute("tr.queue-row >> nth=0", "data-item-id") == str(grounded.extraction_id)
    assert page.locator('[data-rule="tool_bypass"]').inner_text().split() == ["tool_bypass", "1"]
    assert _screenshot(page, "queue.png").stat().st_size > 10_000

    _row(page, grounded).locator("a.item-link").click()
    page.wait_for_url(f"**/review/items/{grounded.extraction_id}")
    assert page.locator('[data-testid="source"]').get_attribute("data-state") == "grounded"
    image = page.locator("#page-image")
    page.wait_for_function("() => { const i = document.getElementById('page-image');"
                           " return i.complete && i.naturalWidth > 0; }")
    shares = image.evaluate(HIGHLIGHT_SHARE_JS)
    assert shares["boxes"] == 1
    assert shares["inside"] > 0.4, shares  # the quoted line is drawn highlighted ...
    assert shares["below"] < 0.02, shares  # ... and the rest of the page is not
    assert "never cross-checked" in page.locator('[data-testid="flags"]').inner_text()

    # An evidence link opens its span in the waterfall, and its full input/output loads on demand (htmx).
    page.locator(f'a.span-link[data-span="{grounded.spans["submit"]}"]').click()
    span = page.locator(f"details#span-{grounded.spans['submit']}")
    # The link's script opens the span after the navigation to its anchor: wait for it rather than read at once.
    page.wait_for_selector(f"details#span-{grounded.spans['submit']}[open]", timeout=10_000)
    assert span.get_attribute("open") is not None
    payload = span.locator('[data-testid="span-payload"]')
    payload.filter(has_text=grounded.quote).wait_for(timeout=10_000)  # loaded on demand
    assert grounded.quote in payload.inner_text()
    page.evaluate("window.scrollTo(0, 0)")
    assert _screenshot(page, "item.png").stat().st_size > 10_000

    # The decision bar is on screen at 1280x800 without scrolling.
    box = page.locator("button.approve").bounding_box()
    assert box is not None and box["y"] >= 0 and box["y"] + box["height"] <= VIEWPORT["height"]

    page.fill('input[name="reviewer"]', "ana")
    page.keyboard.press("Escape")
    page.keyboard.press("a")
    page.wait_for_url(f"**/review/items/{missing.extraction_id}?done={grounded.extraction_id}")
    assert "approve" in page.locator('[data-testid="decided-notice"]').inner_text()
    assert page.locator('[data-testid="source"]').get_attribute("data-state") == "not_found"
    assert page.locator('[data-testid="quote-not-found"]').is_visible()
    _screenshot(page, "item-quote-not-found.png")

    page.goto(f"{server.base_url}/review")
    assert page.locator("tr.queue-row").count() == 1 and _row(page, grounded).count() == 0

    job = httpx.get(f"{server.base_url}/v1/jobs/{grounded.job_id}").json()
    review = job["results"][0]["review"]
    assert (review["decision"], review["reviewer"]) == ("approve", "ana")
    audit = httpx.get(f"{server.base_url}/v1/reviews").json()
    assert [(d["extraction_id"], d["decision"]) for d in audit["items"]] == [(grounded.extraction_id, "approve")]
    _only_local(page, server)


def test_keyboard_walks_the_queue_and_corrects_and_rejects(page, server: LiveServer) -> None:  # noqa: ANN001
    oldest = seed_flagged_run(parameter="Gain", created_at=utcnow() - timedelta(hours=3))
    middle = seed_flagged_run(parameter="Input resistance", created_at=utcnow() - timedelta(hours=2))
    newest = seed_flagged_run(parameter="Supply voltage")

    page.goto(f"{server.base_url}/review")
    page.keyboard.press("j")
    page.keyboard.press("j")
    page.keyboard.press("k")
    assert page.get_attribute("tr.queue-row.selected", "data-item-id") == str(middle.extraction_id)
    page.keyboard.press("Enter")
    page.wait_for_url(f"**/review/items/{middle.extraction_id}")
    page.keyboard.press("k")
    page.wait_for_url(f"**/review/items/{newest.extraction_id}")
    page.keyboard.press("j")
    page.wait_for_url(f"**/review/items/{middle.extraction_id}")

    # c opens the correction (prefilled with the model's answer) and focuses it; Ctrl+Enter submits.
    page.keyboard.press("c")
    assert page.locator("[data-correction]").get_attribute("open") is not None
    focused = page.evaluate("document.activeElement.name")
    assert focused == "value_typical"
    page.keyboard.type("9")
    page.fill('input[name="unit"]', "V")
    page.fill('input[name="comment"]', "typical is 9 V at VS = 9 V")
    page.locator('input[name="comment"]').press("Control+Enter")
    page.wait_for_url(f"**/review/items/{oldest.extraction_id}?done={middle.extraction_id}")

    # r focuses the comment; the reason typed there goes with the rejection.
    page.keyboard.press("r")
    assert page.evaluate("document.activeElement.name") == "comment"
    page.keyboard.type("value read from the wrong table")
    page.keyboard.press("Control+Enter")
    page.wait_for_url(f"**/review?done={oldest.extraction_id}")

    decisions = {d["extraction_id"]: d for d in httpx.get(f"{server.base_url}/v1/reviews").json()["items"]}
    assert decisions[middle.extraction_id]["decision"] == "correct"
    assert decisions[middle.extraction_id]["correction"]["values"][0]["typical"] == 9.0
    assert decisions[middle.extraction_id]["comment"] == "typical is 9 V at VS = 9 V"
    assert decisions[oldest.extraction_id]["decision"] == "reject"
    assert decisions[oldest.extraction_id]["comment"] == "value read from the wrong table"
    assert newest.extraction_id not in decisions
    assert [int(i) for i in page.locator("tr.queue-row").evaluate_all("rows => rows.map(r => r.dataset.itemId)")] \
        == [newest.extraction_id]
    _only_local(page, server)


# --- Through the real pipeline ---------------------------------------------------------------------------


def test_job_flagged_by_the_pipeline_is_reviewed_in_the_browser(page, browser, tmp_path: Path,  # noqa: ANN001
                                                              monkeypatch: pytest.MonkeyPatch,
                                                              datasheets_dir: Path) -> None:
    """API → broker → worker → agent (LiteLLM to a scripted model) → dispatch record → detectors and grounding
    → dashboard. The model answers at once with a quote that is really in the datasheet, without opening it:
    the detectors flag the tool bypass, grounding still finds the quote, and the page shows it highlighted."""
    pdf = datasheet(DATASHEET)
    line = quotable_line(pdf)
    _clean_environment(monkeypatch)
    with ScriptedLLM() as llm:
        llm.always(submit({"found": True, "values": [{"typical": line.number, "unit": "V"}], "source_page": line.page,
                           "quote": line.text, "confidence": 0.9}))
        models_file = tmp_path / "models.yaml"
        models_file.write_text(yaml.safe_dump({"model_list": [llm.models_file_entry("scripted")]}))
        env = {"DSX_MODELS_FILE": str(models_file), "DSX_CROSS_CHECK_MODEL": ""}
        with live_server(tmp_path, worker=True, env=env) as server, _pointed_at(server, monkeypatch):
            submitted = httpx.post(f"{server.base_url}/v1/jobs",
                                   files={"file": (pdf.name, pdf.read_bytes(), "application/pdf")},
                                   data={"parameters": '["Supply voltage"]', "model": "scripted", "engine": "agentic"})
            assert submitted.status_code == 202, submitted.text
            job_id = submitted.json()["job_id"]
            job = wait_until(lambda: _finished(server, job_id), timeout_s=120, what=f"job {job_id} to finish")
            assert job["status"] == "needs_review", (job, server.logs())
            result = job["results"][0]
            assert "tool_bypass" in {f["rule"] for f in result["flags"]}

            page.goto(f"{server.base_url}/review?job={job_id}")
            row = page.locator(f'tr.queue-row[data-item-id="{result["extraction_id"]}"]')
            assert "tool_bypass" in row.inner_text()
            row.locator("a.item-link").click()
            page.wait_for_url(f"**/review/items/{result['extraction_id']}?job={job_id}")
            page.wait_for_function("() => { const i = document.getElementById('page-image');"
                                   " return i.complete && i.naturalWidth > 0; }")
            assert page.locator('[data-testid="source"]').get_attribute("data-state") == "grounded"
            shares = page.locator("#page-image").evaluate(HIGHLIGHT_SHARE_JS)
            assert shares["inside"] > 0.4 and shares["below"] < 0.02, shares
            # The waterfall is the real record: the agent span, the model call and the submit call.
            kinds = page.locator("details.wf-row").evaluate_all("rows => rows.map(r => r.dataset.kind)")
            assert kinds.count("llm") == len(llm.requests) and "agent" in kinds and "tool" in kinds
            evidence = page.locator('[data-rule="tool_bypass"] a.span-link')
            assert evidence.count() >= 1
            for span_id in evidence.evaluate_all("links => links.map(a => a.dataset.span)"):
                assert page.locator(f"details#span-{span_id}").count() == 1
            _screenshot(page, "item-from-pipeline.png")

            page.locator('input[name="comment"]').fill("value checked on the page")
            page.locator("button.approve").click()
            page.wait_for_url(f"**/review?job={job_id}&done={result['extraction_id']}")
            assert page.locator("tr.queue-row").count() == 0
            review = httpx.get(f"{server.base_url}/v1/jobs/{job_id}").json()["results"][0]["review"]
            assert review["decision"] == "approve" and review["comment"] == "value checked on the page"
            _only_local(page, server)


def _finished(server: LiveServer, job_id: str) -> dict | None:
    job = httpx.get(f"{server.base_url}/v1/jobs/{job_id}").json()
    return job if job["status"] not in ("queued", "running") else None


@pytest.fixture
def prefixed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, datasheets_dir: Path) -> Iterator[HTTPPrefixProxy]:
    """An API-only live server mounted under /dsx by a prefix-stripping gateway."""
    _clean_environment(monkeypatch)
    with live_server(tmp_path, worker=False, env={"DSX_ROOT_PATH": "/dsx"}) as live, _pointed_at(live, monkeypatch), \
            HTTPPrefixProxy(live.base_url, "/dsx") as gateway:
        yield gateway


def test_the_dashboard_works_under_a_gateway_prefix(page, prefixed: HTTPPrefixProxy) -> None:  # noqa: ANN001
    second = seed_flagged_run(parameter="Quiescent current", rule="tool_bypass", severity="error",
                              quote_found=False, created_at=utcnow() - timedelta(hours=2))
    first = seed_flagged_run()
    root = f"{prefixed.base_url}/dsx"

    page.goto(f"{root}/review")
    assert page.locator("tr.queue-row").count() == 2
    _row(page, first).locator("a.item-link").click()
    page.wait_for_url(f"{root}/review/items/{first.extraction_id}")
    page.wait_for_function("() => { const i = document.getElementById('page-image');"
                           " return i.complete && i.naturalWidth > 0; }")
    page.locator(f'a.span-link[data-span="{first.spans["submit"]}"]').click()
    span = page.locator(f"details#span-{first.spans['submit']}")
    assert first.quote in span.locator('[data-testid="span-payload"]').inner_text()  # htmx fragment, prefixed

    page.fill('input[name="reviewer"]', "ana")
    page.keyboard.press("Escape")
    page.keyboard.press("a")
    page.wait_for_url(f"{root}/review/items/{second.extraction_id}?done={first.extraction_id}")
    page.locator("a.brand").click()
    page.wait_for_url(f"{root}/review")
    assert page.locator("tr.queue-row").count() == 1

    assert prefixed.outside == [], "the browser was sent outside the gateway's prefix"
    assert all(url.startswith(root + "/") or url.startswith("data:") for url in page.requested), page.requested
    assert not page.failed, page.failed
    assert not page.console_errors, page.console_errors


def test_item_page_explains_its_labels_wraps_long_quotes_and_names_other_variants(
        page, server: LiveServer) -> None:  # noqa: ANN001
    run = seed_flagged_run(parameter="Dropout voltage")
    leader_quote = "Dropout voltage " + "." * 400 + " 180 mV"
    with server.session() as session:
        extraction = session.get(Extraction, run.extraction_id)
        extraction.quote = leader_quote
        extraction.values = [{"min": None, "typical": 180.0, "max": 300.0, "unit": "mV", "conditions": [],
                              "other_variants": [{"label": "IOUT = 100 mA", "typical": 60.0, "max": 110.0,
                                                  "unit": "mV"}]}]

    page.goto(f"{server.base_url}/review/items/{run.extraction_id}")
    quote = page.locator('[data-testid="quote"]')
    assert quote.evaluate("(q) => q.scrollWidth <= q.clientWidth + 1"), "the long quote overflows its box"
    assert "IOUT = 100 mA" in page.locator('[data-testid="other-variants"]').inner_text()
    assert "≤ 300 (typ 180) mV" in page.locator('[data-testid="value-reading"]').inner_text()

    legend = page.locator('[data-testid="legend"]')
    legend.locator("summary").click()
    text = legend.inner_text()
    assert "no fault" in text and "unexplained" in text and "returned nothing" in text
    assert "→" not in page.locator('[data-testid="timeline"]').inner_text()
    assert _screenshot(page, "item-legend-variants.png").stat().st_size > 10_000
    _only_local(page, server)
