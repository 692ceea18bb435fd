"""Browser tests of issue 11 item 6: names of 250 characters without a space never widen a
pane, the main area follows drags, a new item opens at its top, and a click opens a folder."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from .conftest import login, payload, topic_text
from .test_critiques import folder, wait_for_tree_version
from .test_pages import import_corpus

pytestmark = pytest.mark.browser

LONG = "Quarterly-statement-" + "x" * 226  # 246 characters, no space: 250 with ".txt"

OVERFLOWING = """() => {
  const out = [];
  const page = document.scrollingElement;
  if (page.scrollWidth > page.clientWidth) out.push("page");
  for (const sel of ["#content", "#panel-history", "#tree", ".topbar"]) {
    const el = document.querySelector(sel);
    if (el && el.scrollWidth > el.clientWidth + 1) out.push(sel);
  }
  for (const el of document.querySelectorAll("#toasts .toast, #doc-title, #upload-results")) {
    if (el.getBoundingClientRect().right > window.innerWidth) out.push(el.id || el.className);
  }
  return out;
}"""


def overflowing(page: Page) -> list[str]:
    return list(page.evaluate(OVERFLOWING))


def test_long_names_wrap_or_ellipsize_everywhere(page: Page, user: str) -> None:
    login(page, user)
    import_corpus(page, per_folder=1)
    page.set_input_files(
        "#file-input", files=[payload(f"{LONG}.txt", topic_text("cooking", 7).encode())]
    )
    rows = page.locator("#upload-results tbody tr")
    expect(rows.last).to_have_attribute("data-status", "stored")
    assert overflowing(page) == []

    unplaced = page.locator("#tree .folder.unfiled").first
    unplaced.locator(".row").first.click()
    unplaced.locator(".doc").first.click()
    expect(page.locator("#doc-title")).to_contain_text(LONG[:40])
    assert overflowing(page) == []

    page.click("#move-btn")
    page.fill("#move-filter", "cook")
    page.press("#move-filter", "Enter")
    expect(page.locator("#doc-where")).to_contain_text("Filed in cooking")
    expect(page.locator("#toasts .toast", has_text="Moved")).to_be_visible()
    assert overflowing(page) == []

    folder(page, "cooking").locator(".name").first.click()
    expect(page.locator("#folder-view .listing")).to_contain_text(LONG[:40])
    page.click("#tab-history")
    expect(page.locator("#history-list > li").first).to_contain_text(LONG[:40])
    assert overflowing(page) == []


def test_fresh_panes_scroll_and_folder_clicks(page: Page, user: str) -> None:
    login(page, user)
    import_corpus(page, per_folder=30)
    # The recluster the import starts redraws the tree: wait for it before dragging.
    wait_for_tree_version(page, 1)
    cooking = folder(page, "cooking")
    cooking.locator(".name").first.click()
    expect(cooking).to_have_attribute("aria-expanded", "true")
    expect(page.locator("#folder-view .listing li")).to_have_count(30)
    # Clicking the name of an open folder keeps it open; only the arrow closes it.
    cooking.locator(".name").first.click()
    expect(cooking).to_have_attribute("aria-expanded", "true")
    cooking.locator(".twisty").first.click()
    expect(cooking).to_have_attribute("aria-expanded", "false")

    # A new item opens at its top, however far down the last one was read.
    page.evaluate("document.querySelector('#content').scrollTop = 10000")
    assert page.evaluate("document.querySelector('#content').scrollTop") > 0
    folder(page, "astronomy").locator(".name").first.click()
    expect(page.locator("#folder-title")).to_have_text("astronomy")
    assert page.evaluate("document.querySelector('#content').scrollTop") == 0

    # The folder shown in the main area follows a drag in the tree (a tall window: the source
    # and the target row both in view).
    page.set_viewport_size({"width": 1360, "height": 1600})
    astronomy = folder(page, "astronomy")
    astronomy.locator(".doc", has_text="astronomy-0").first.drag_to(
        folder(page, "finance").locator(".row").first
    )
    expect(folder(page, "finance").locator(".doc", has_text="astronomy-0")).to_have_count(1)
    expect(page.locator("#folder-view .listing li")).to_have_count(29)
    expect(page.locator("#folder-view")).not_to_contain_text("astronomy-0 ")
