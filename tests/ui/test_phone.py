"""Browser test of issue 11 item 4: at 390x844 the app shows one pane at a time, never
scrolls sideways, and keeps search and Log out in reach; it takes the phone screenshot."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect

from .conftest import Server, login, open_page, payload, topic_text
from .test_critiques import folder, wait_for_tree_version
from .test_pages import import_corpus
from .test_screenshots import _shot

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}


@pytest.fixture
def phone(browser: Browser, server: Server) -> Iterator[Page]:
    yield from open_page(
        browser, server, viewport=PHONE, device_scale_factor=2, is_mobile=True, has_touch=True
    )


def no_sideways_scroll(page: Page) -> None:
    width = page.evaluate("document.scrollingElement.scrollWidth")
    assert width <= PHONE["width"], f"the page is {width}px wide"
    wide = page.evaluate(
        """() => [...document.querySelectorAll('.content, .sidebar, .side, .panel, .tree')]
            .filter((el) => el.offsetParent && el.scrollWidth > el.clientWidth + 1)
            .map((el) => el.className)"""
    )
    assert wide == [], wide


def in_view(page: Page, selector: str) -> None:
    box = page.locator(selector).bounding_box()
    assert box is not None, f"{selector} is not shown"
    assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], (selector, box)
    assert box["y"] >= 0 and box["y"] + box["height"] <= PHONE["height"], (selector, box)


def test_phone_one_pane_at_a_time(phone: Page, user: str) -> None:
    page = phone
    login(page, user)
    import_corpus(page, per_folder=3)
    page.set_input_files(
        "#file-input", files=[payload("bake.txt", topic_text("cooking", 9).encode())]
    )
    wait_for_tree_version(page, 1)
    page.click("#pane-tab-tree")
    expect(page.locator("#tree")).to_be_visible()
    expect(page.locator("#content")).to_be_hidden()
    expect(page.locator(".side")).to_be_hidden()
    in_view(page, "#search")
    in_view(page, "#logout-btn")
    no_sideways_scroll(page)

    # A folder, then a document, open in the one pane; back returns to the folders.
    folder(page, "cooking").locator(".name").first.click()
    expect(page.locator("#folder-view")).to_be_visible()
    expect(page.locator("#tree")).to_be_hidden()
    page.locator("#folder-view .listing li[data-doc]", has_text="cooking-1").click()
    expect(page.locator("#doc-title")).to_have_text("cooking-1")
    no_sideways_scroll(page)
    _shot(page, "phone-small-corpus")
    page.click("#pane-back")
    expect(page.locator("#tree")).to_be_visible()
    expect(page.locator("#content")).to_be_hidden()

    # Questions and history have their own pane.
    page.click("#pane-tab-side")
    expect(page.locator(".side")).to_be_visible()
    page.click("#tab-history")
    expect(page.locator("#history-list")).to_be_visible()
    no_sideways_scroll(page)

    # Search from any pane shows its results in the one pane.
    page.fill("#search", "telescope")
    expect(page.locator("#search-results li").first).to_be_visible()
    expect(page.locator(".side")).to_be_hidden()
    no_sideways_scroll(page)
    # The inbox fits too, and opens a document in the one pane.
    page.click("#inbox-btn")
    expect(page.locator("#inbox-view")).to_be_visible()
    no_sideways_scroll(page)
    page.locator("#inbox-list tr [data-open-doc]").first.click()
    expect(page.locator("#doc-where")).to_be_visible()
    page.click("#logout-btn")
    expect(page.locator("#login-form")).to_be_visible()
