"""Browser tests of issue 11 item 2: the inbox lists every unfiled document with its
suggested place and confidence, sorted and filtered; file one, or all above a confidence;
proposals are listed there too."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from .conftest import login, topic_text
from .test_critiques import upload, wait_for_tree_version
from .test_pages import import_corpus

pytestmark = pytest.mark.browser


def confidences(page: Page) -> list[float]:
    rows = page.locator("#inbox-list tr")
    return [float(rows.nth(i).get_attribute("data-confidence") or -1) for i in range(rows.count())]


def test_inbox_sorts_filters_and_files(page: Page, user: str) -> None:
    login(page, user)
    import_corpus(page)
    new = [(f"garden-{i}.txt", topic_text("gardening", i)) for i in range(6)]
    new += [(f"bake-{i}.txt", topic_text("cooking", 10 + i)) for i in range(3)]
    new += [(f"sky-{i}.txt", topic_text("astronomy", 10 + i)) for i in range(2)]
    upload(page, new)
    wait_for_tree_version(page, 1)

    page.click("#inbox-btn")
    rows = page.locator("#inbox-list tr")
    expect(rows).to_have_count(11)
    expect(page.locator("#inbox-count")).to_have_text("11")
    expect(page.locator("#inbox-proposals li[data-proposal-row]")).not_to_have_count(0)
    bake = rows.filter(has_text="bake-0")
    expect(bake.locator(".place-cell")).to_have_text("cooking")
    values = confidences(page)
    assert values == sorted(values, reverse=True), values
    # A document in a proposed folder shows no confidence: the new folder is the suggestion.
    in_proposal = rows.filter(has=page.locator(".place-cell", has_text="a new folder"))
    expect(in_proposal).not_to_have_count(0)
    for i in range(in_proposal.count()):
        assert in_proposal.nth(i).get_attribute("data-confidence") == "-1"
        expect(in_proposal.nth(i).locator(".conf-cell")).to_have_text("–")
    page.select_option("#inbox-sort", "confidence-asc")
    values = confidences(page)
    # Least confident first, and the rows without a figure (in a proposal) after them.
    shown = [v for v in values if v >= 0]
    assert values == shown + [-1.0] * (len(values) - len(shown)), values
    assert shown == sorted(shown) and len(shown) < len(values), values
    page.select_option("#inbox-sort", "title")
    titles = [rows.nth(i).locator(".title-cell").inner_text() for i in range(rows.count())]
    assert titles == sorted(titles), titles

    page.fill("#inbox-filter", "sky")
    expect(rows).to_have_count(2)
    page.fill("#inbox-filter", "")
    expect(rows).to_have_count(11)

    # File one: it leaves the inbox, with Undo in its message.
    bake.locator(".act-file").click()
    expect(rows).to_have_count(10)
    moved = page.locator("#toasts .toast", has_text="Moved")
    expect(moved.get_by_role("button", name="Undo")).to_be_visible()

    # File all at or above a chosen confidence (0 %: every suggestion in an existing folder).
    page.fill("#inbox-threshold", "0")
    button = page.locator("#inbox-file-all")
    expect(button).to_contain_text("File the 4 documents at 0% or more")
    button.click()
    expect(rows).to_have_count(6)
    expect(page.locator("#inbox-list .act-file")).to_have_count(0)
    expect(button).to_be_disabled()
    page.locator("#toasts .toast", has_text="Filed 4 documents").get_by_role(
        "button", name="Undo"
    ).click()
    expect(rows).to_have_count(10)
