"""Browser test of issue 14 item 3 in the UI: a scan says what OCR is doing, then shows the
text it read, without a reload (docs/ocr.md)."""

from __future__ import annotations

import shutil

import pytest
from playwright.sync_api import Page, expect

from conftest import unavailable
from service.test_ocr import png

from .conftest import login, payload

pytestmark = pytest.mark.browser


def test_a_scan_says_it_is_being_read_then_shows_its_text(page: Page, user: str) -> None:
    if shutil.which("tesseract") is None:
        unavailable("Tesseract is not installed (apt-get install tesseract-ocr tesseract-ocr-eng)")
    login(page, user)
    scan = png(["Invoice for the garden shed", "Total 42 euros"])
    page.set_input_files("#file-input", files=[payload("shed-invoice.png", scan, "image/png")])
    row = page.locator("#upload-results tr", has_text="shed-invoice.png")
    expect(row).to_contain_text("a scan", timeout=20_000)
    row.get_by_role("button", name="Open").click()
    expect(page.locator(".doc-meta")).to_contain_text("Scanned image")
    # Pending or running first, then read: the open document updates by itself.
    expect(page.locator("#doc-scan")).to_have_text("Text read from the scan.", timeout=90_000)
    expect(page.locator("#doc-text")).to_contain_text("garden")
