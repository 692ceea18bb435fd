"""Browser tests of issue 11 item 7, plain words: no jargon, figures of bytes or phase ids in
what the person reads; the quality panel in sentences; progress as words with time left."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from .conftest import login
from .test_critiques import folder
from .test_pages import import_corpus

pytestmark = pytest.mark.browser

JARGON = re.compile(
    r"triple|H-correlation|\bHAI\b|\bv\d+\b|update due|\d\s*(KB|bytes)\b|dendrogram"
    r"|extended_tree|exemplars|\bphase\b|margin \d",
    re.I,
)


def visible_text(page: Page) -> str:
    """What the person reads: the rendered text, without closed <details> and tooltips."""
    return str(page.evaluate("document.body.innerText"))


def test_the_persons_view_has_no_jargon(page: Page, user: str) -> None:
    login(page, user)
    import_corpus(page, per_folder=3)
    cooking = folder(page, "cooking")
    cooking.locator(".row").first.click()
    cooking.locator(".doc", has_text="cooking-1").click()
    expect(page.locator("#doc-title")).to_have_text("cooking-1")
    expect(page.locator(".doc-meta")).to_contain_text("Text")
    page.click("#tab-history")
    expect(page.locator("#history-list > li").first).to_contain_text("Imported")
    expect(page.locator("#triples-summary")).to_contain_text("Foldwise keeps to your 3 folders")
    text = visible_text(page)
    assert not JARGON.search(text), JARGON.search(text)

    # Quality in sentences; the measures are there for whoever opens "Details".
    page.click("#tab-quality")
    summary = page.locator("#quality-summary")
    expect(summary).to_contain_text(re.compile(r"Your 3 folders are (mostly |only partly )?kept"))
    text = visible_text(page)
    assert not JARGON.search(text), JARGON.search(text)
    expect(page.locator("#q-hcorr")).to_be_hidden()
    page.click("#quality-details summary")
    expect(page.locator("#q-hcorr")).to_be_visible()


def test_progress_reads_as_words_with_time_left(page: Page, user: str) -> None:
    login(page, user)
    label = page.evaluate(
        """async () => {
          const jobs = await import("/static/js/jobs.js");
          jobs.showJob({
            id: 0, state: "running", started_at: new Date(Date.now() - 20000).toISOString(),
            progress: {phase: "cluster", run: 1, r_max: 1, merges_done: 50, merges_total: 100},
          });
          return document.querySelector("#job-label").textContent;
        }"""
    )
    assert label.startswith("Grouping similar documents"), label
    assert re.search(r"about \d+ seconds left", label), label
    assert "cluster" not in label.replace("Grouping", ""), label
