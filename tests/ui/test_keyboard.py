"""Browser tests of issue 11 item 5: the file manager without a mouse, the "?" list of
shortcuts, and axe-core (vendored in tests/ui/assets/axe-core, MPL-2.0) reporting no serious
or critical violation on the page's screens."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from .conftest import login, topic_text
from .test_critiques import RECLUSTER_TIMEOUT_MS, mixed_text, upload, wait_for_tree_version
from .test_pages import import_corpus

pytestmark = pytest.mark.browser

AXE = (Path(__file__).parent / "assets" / "axe-core" / "axe.min.js").read_text()


def serious_violations(page: Page) -> list[str]:
    """axe-core's serious and critical violations on the page as it is, one line each."""
    if not page.evaluate("typeof window.axe === 'object'"):
        # Evaluated by the test driver, not injected as a <script>: the app's CSP stays on.
        page.evaluate(AXE + "\n;0")
    found = page.evaluate(
        """async () => {
          const result = await axe.run(document, {resultTypes: ["violations"]});
          return result.violations
            .filter((v) => v.impact === "serious" || v.impact === "critical")
            .map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
        }"""
    )
    return list(found)


def focused_text(page: Page) -> str:
    return str(page.evaluate("document.activeElement.textContent"))


def test_keyboard_only_and_the_shortcut_list(page: Page, user: str) -> None:
    login(page, user)
    import_corpus(page, per_folder=2)
    wait_for_tree_version(page, 1)
    page.locator("body").press("?")
    dialog = page.locator("#shortcuts-dialog")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("F2")
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()

    # "t" goes to the folders; Enter on a folder opens it (expanded, shown in the main area).
    page.keyboard.press("t")
    expect(page.locator("#tree .node:focus")).to_have_count(1)
    page.keyboard.press("Home")
    page.keyboard.press("Enter")
    expect(page.locator("#folder-title")).to_have_text("astronomy")
    expect(page.locator("#tree > .folder").first).to_have_attribute("aria-expanded", "true")

    # Listing rows are focusable and open with Enter.
    row = page.locator("#folder-view .listing li[data-doc]").first
    row.focus()
    page.keyboard.press("Enter")
    expect(page.locator("#doc-title")).to_have_text(re.compile("astronomy-"))

    # "m" on a document: arrows move in the picker, Enter files.
    page.keyboard.press("t")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("m")
    expect(page.locator("#move-dialog")).to_be_visible()
    expect(page.locator("#move-list li.active")).to_have_text("astronomy")
    page.keyboard.press("ArrowDown")
    expect(page.locator("#move-list li.active")).to_have_text("cooking")
    page.keyboard.press("Enter")
    expect(page.locator("#move-dialog")).to_be_hidden()
    expect(page.locator("#toasts .toast", has_text="to cooking")).to_be_visible()

    # Search results and similar documents are reached and opened by keyboard too.
    page.keyboard.press("/")
    page.keyboard.type("telescope")
    hit = page.locator("#search-results li").first
    expect(hit).to_have_attribute("tabindex", "0")
    hit.focus()
    page.keyboard.press("Enter")
    expect(page.locator("#doc-title")).to_have_text(re.compile("astronomy-"))
    similar = page.locator("#similar a").first
    expect(similar).to_have_attribute("href", "#")
    title = similar.inner_text()
    similar.focus()
    page.keyboard.press("Enter")
    expect(page.locator("#doc-title")).to_have_text(title)


def test_open_in_a_question_opens_and_axe_finds_nothing_serious(page: Page, user: str) -> None:
    login(page, user)
    assert serious_violations(page) == []
    import_corpus(page)
    new = [(f"garden-{i}.txt", topic_text("gardening", i)) for i in range(6)]
    new += [(f"mixed-{i}.txt", mixed_text(i)) for i in range(2)]
    upload(page, new)
    wait_for_tree_version(page, 1)
    assert serious_violations(page) == []

    # The "open" button of a choice opens the document and does not answer the question.
    question = page.locator("#closer-question")
    expect(question).to_be_visible(timeout=RECLUSTER_TIMEOUT_MS)
    title = page.locator("#pick-b strong").inner_text()
    page.locator("#pick-b [data-open]").focus()
    page.keyboard.press("Enter")
    expect(page.locator("#doc-title")).to_have_text(title)
    expect(question).to_be_visible()
    page.click("#tab-history")
    expect(page.locator("#history-list")).not_to_contain_text("Answered")
    assert serious_violations(page) == []
    page.click("#tab-questions")
    page.locator("#answer-b").focus()
    page.keyboard.press("Enter")
    page.click("#tab-history")
    expect(page.locator("#history-list > li").first).to_contain_text("Answered")

    # The other screens and dialogs.
    page.locator("#tree .folder.proposed .name").first.click()
    expect(page.locator("#proposal-card")).to_be_visible()
    assert serious_violations(page) == []
    page.click("#proposal-reject")
    expect(page.locator("#confirm-dialog")).to_be_visible()
    assert serious_violations(page) == []
    page.keyboard.press("Escape")
    page.click("#inbox-btn")
    expect(page.locator("#inbox-list tr").first).to_be_visible()
    assert serious_violations(page) == []
    page.click("#tab-quality")
    expect(page.locator("#quality-report")).to_be_visible()
    assert serious_violations(page) == []
    page.locator("body").press("?")
    assert serious_violations(page) == []
