"""Browser tests of issue 11 item 8: no cached documents after Log out, validation errors as
pages, and no Recluster button on an empty account."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from .conftest import login
from .test_pages import import_corpus

pytestmark = pytest.mark.browser


def test_back_after_log_out_shows_nothing(page: Page, user: str) -> None:
    login(page, user)
    import_corpus(page, per_folder=1)
    page.click("#tree .folder:has-text('astronomy') .name")
    expect(page.locator("#content")).to_contain_text("astronomy-0")
    answer = page.request.get("/", headers={"Accept": "text/html"})
    assert "no-store" in answer.headers.get("cache-control", "")
    page.click("#logout-btn")
    expect(page).to_have_url(re.compile(r"/login$"))
    page.go_back()
    # The page is asked for again (not restored from a cache) and the server sends login.
    expect(page).to_have_url(re.compile(r"/login"))
    expect(page.locator("body")).not_to_contain_text("astronomy")


def test_validation_errors_on_pages_are_sentences(page: Page, user: str) -> None:
    login(page, user)
    page.goto("/api/documents/not-a-number/file")
    expect(page.locator("#page-error")).to_contain_text("not valid")
    expect(page.locator("body")).not_to_contain_text('"detail"')
    page.goto("/login?expired=maybe")
    expect(page.locator("#page-error")).to_contain_text("expired")
    # API clients still get the JSON answer.
    res = page.request.get("/api/documents/not-a-number", headers={"Accept": "application/json"})
    assert res.status == 422 and "detail" in res.json()


def test_recluster_is_disabled_on_an_empty_account(page: Page, user: str) -> None:
    login(page, user)
    button = page.locator("#recluster-btn")
    expect(button).to_be_disabled()
    expect(button).to_have_attribute("title", re.compile("Add documents first"))
    import_corpus(page, per_folder=1)
    expect(button).to_be_enabled()
