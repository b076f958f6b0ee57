"""End to end in headless Chromium: an annotator opens the local page, answers the Figure-1 questions,
and the judgements land in Postgres. Uses Debian's chromium (`make browser-deps`); never downloads."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_annotation_helpers import make_warehouse

from annotation.sampling import sample_batch
from annotation.server import make_server, serve_in_thread
from warehouse.settings import out_folder
from warehouse.target import Target

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def chromium_path() -> Path:
    if not CHROMIUM.exists():
        pytest.skip(
            f"{CHROMIUM} is absent: install Debian's chromium with `make browser-deps` to run this test"
        )
    return CHROMIUM


def test_annotate_in_the_browser(chromium_path: Path, fresh_target: Target) -> None:
    sync_api = pytest.importorskip("playwright.sync_api", reason="python playwright is not installed")
    make_warehouse(fresh_target)
    sample_batch(fresh_target, "web", 2, hypotheses_per_premise=3, seed=3)
    server = make_server(fresh_target, port=0, judgements_per_item=5)
    serve_in_thread(server)
    base = f"http://127.0.0.1:{server.server_address[1]}"
    screenshot = out_folder() / "annotation_page.png"
    screenshot.parent.mkdir(parents=True, exist_ok=True)
    try:
        with sync_api.sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=str(chromium_path), args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1000, "height": 800})
            page.goto(f"{base}/?task=sherliic")
            page.fill("#worker", "lab-annotator-1")
            page.click("#start")
            premise = page.inner_text("#premise")
            assert "[A]" in premise and "[B]" in premise
            assert "For example A:" in page.inner_text(".fact")
            items = page.locator(".item")
            n_first = items.count()
            assert n_first >= 1
            # answer the first statement "yes", the others "no"; submitting incomplete forms fails
            answers = {}
            for i in range(n_first):
                item_id = items.nth(i).get_attribute("data-item")
                answer = "yes" if i == 0 else "no"
                page.check(f"input[name='answer_{item_id}'][value='{answer}']")
                answers[item_id] = answer
            page.screenshot(path=str(screenshot), full_page=True)
            page.click("#submit")
            page.wait_for_load_state()
            # the next premise group is shown (different fact); flag its first statement incomprehensible
            assert page.inner_text("#premise") != premise
            second = page.locator(".item")
            for i in range(second.count()):
                item_id = second.nth(i).get_attribute("data-item")
                answer = "incomprehensible" if i == 0 else "yes"
                page.check(f"input[name='answer_{item_id}'][value='{answer}']")
                answers[item_id] = answer
            page.click("#submit")
            page.wait_for_load_state()
            assert "nothing left" in page.inner_text("#done")
            browser.close()
    finally:
        server.shutdown()
        server.server_close()
    with fresh_target.connect() as conn:
        stored = dict(
            conn.execute(
                "select item_id, answer from raw.annotation_judgements "
                "where worker_id = 'lab-annotator-1' and task = 'sherliic' and source = 'web'"
            ).fetchall()
        )
    assert stored == answers
    assert screenshot.stat().st_size > 5000
