"""Screenshots of the main screens on the python-docs corpus, and the tree's render time with
2,000 documents in 100 folders (printed, not asserted: it depends on the machine).

Slow (a recluster over the real corpus): run with ``pytest tests/ui -m slow``. Screenshots go
to a temporary directory; ``FOLDWISE_SCREENSHOT_DIR=docs/screenshots`` refreshes the README's.
"""

from __future__ import annotations

import functools
import io
import json
import os
import random
import tempfile
import time
import urllib.request
import zipfile
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from corpus_path import PYTHON_DOCS

from .conftest import Server, login, payload
from .test_critiques import RECLUSTER_TIMEOUT_MS, wait_for_tree_version

pytestmark = [pytest.mark.slow, pytest.mark.browser]

CORPUS = PYTHON_DOCS

#: Folders left out of the import: their documents arrive as new ones, so the tree proposes them.
HIDDEN_FOLDERS = (
    "the-python-standard-library/networking-and-interprocess-communication/"
    "mod-asyncio-asynchronous-i-o",
    "the-python-standard-library/internet-data-handling/"
    "mod-email-an-email-and-mime-handling-package",
)
#: Documents of known folders that also arrive as new ones.
NEW_PER_FOLDER = 1


def _api(server: Server, token: str, method: str, path: str, body: object) -> object:
    req = urllib.request.Request(
        server.url + path,
        method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=120) as res:
        return json.loads(res.read())


@functools.cache
def _shots_dir() -> Path:
    """``$FOLDWISE_SCREENSHOT_DIR`` (``docs/screenshots`` refreshes the README's), else a
    temporary directory: the default run writes nothing into the repository."""
    chosen = os.environ.get("FOLDWISE_SCREENSHOT_DIR")
    return Path(chosen) if chosen else Path(tempfile.mkdtemp(prefix="foldwise-shots-"))


def _shot(page: Page, name: str) -> None:
    shots = _shots_dir()
    shots.mkdir(parents=True, exist_ok=True)
    page.evaluate("document.querySelectorAll('.toast').forEach((t) => t.remove())")
    page.screenshot(path=str(shots / f"{name}.png"))


def _python_docs_split() -> tuple[bytes, list[Path]]:
    """The corpus as a zip without the hidden folders and a few documents; those are 'new'."""
    rng = random.Random(7)
    files = sorted(p for p in CORPUS.rglob("*.txt") if p.is_file())
    by_folder: dict[Path, list[Path]] = {}
    for p in files:
        by_folder.setdefault(p.parent, []).append(p)
    new: list[Path] = []
    for folder, members in by_folder.items():
        rel = folder.relative_to(CORPUS).as_posix()
        if rel in HIDDEN_FOLDERS:
            new.extend(members)
        elif folder != CORPUS and len(members) >= 6:
            new.extend(rng.sample(members, NEW_PER_FOLDER))
    keep = [p for p in files if p not in set(new) and p.parent != CORPUS]
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for p in keep:
            zf.write(p, p.relative_to(CORPUS).as_posix())
    return buf.getvalue(), new


@pytest.mark.usefixtures("corpus")
def test_screenshots_python_docs(page: Page, user: str, browser: Browser, server: Server) -> None:
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto("/login")
    page.fill("#login-name", user)
    _shot(page, "login")
    login(page, user)

    archive, new = _python_docs_split()
    page.click("#upload-btn")
    page.set_input_files(
        "#file-input",
        files=[payload("python-docs.zip", archive, "application/zip")],
    )
    expect(page.locator("#upload-results tbody tr").first).to_have_attribute(
        "data-status", "imported", timeout=120_000
    )
    page.set_input_files(
        "#file-input",
        files=[payload(p.name, p.read_bytes()) for p in new]
        + [payload("scan.bin", b"\x00\x01", "application/octet-stream")],
    )
    rows = page.locator("#upload-results tbody tr")
    expect(rows).to_have_count(len(new) + 2, timeout=120_000)
    expect(rows.last).to_have_attribute("data-status", "rejected", timeout=120_000)
    expect(page.locator("#job")).to_be_visible()
    _shot(page, "upload")

    wait_for_tree_version(page, 1)
    proposals = page.locator("#tree .folder.proposed")
    expect(proposals.first).to_be_visible(timeout=RECLUSTER_TIMEOUT_MS)
    # Open the first proposal and a suggested document inside it (in a proposal nested in
    # it, if it holds no document of its own).
    first = proposals.first
    while True:
        if first.get_attribute("aria-expanded") != "true":
            first.locator(":scope > .row .name").click()
        expect(first).to_have_attribute("aria-expanded", "true")
        if first.locator(":scope > [role=group] > .node.doc").count():
            break
        first = first.locator(":scope > [role=group] > .folder.proposed").first
    first.locator(":scope > [role=group] > .node.doc").first.click()
    expect(page.locator("#doc-where")).to_contain_text("suggests")
    expect(page.locator("#similar li").first).not_to_contain_text("Looking")
    first.locator(".row").first.hover()
    _shot(page, "tree-and-document")

    page.click("#tab-questions")
    question = page.locator("#closer-question")
    if question.count():
        # Open the document the question is about, as a person weighing the answer would.
        question.locator(".anchor [data-open]").click()
        expect(page.locator("#doc-title")).to_have_text(
            question.locator(".anchor strong").inner_text()
        )
        _shot(page, "question")
        page.locator("#pick-b strong").click()
    # A proposal opened in the main area: why it is proposed, its terms, its members.
    first = page.locator("#tree .folder.proposed").first
    first.locator(":scope > .row .name").click()
    expect(page.locator("#proposal-card")).to_be_visible()
    _shot(page, "proposal")
    # A few critiques for the history: accept the proposal.
    page.click("#proposal-accept")
    page.click("#tab-history")
    expect(page.locator("#history-list > li").first).to_be_visible()
    _shot(page, "history")

    page.click("#tab-quality")
    expect(page.locator("#quality-report svg")).to_be_visible(timeout=60_000)
    _shot(page, "quality")

    page.fill("#search", "socket timeout")
    expect(page.locator("#search-results li").first).to_be_visible()
    _shot(page, "search")

    page.click("#inbox-btn")
    expect(page.locator("#inbox-list tr").first).to_be_visible()
    _shot(page, "inbox")
    _phone_shot(browser, server, user)


def _phone_shot(browser: Browser, server: Server, user: str) -> None:
    """The same account on a phone (390x844): a suggested document in the one pane."""
    context = browser.new_context(
        base_url=server.url, viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True
    )
    phone = context.new_page()
    try:
        login(phone, user)
        phone.click("#inbox-btn")
        phone.locator("#inbox-list tr [data-open-doc]").first.click()
        expect(phone.locator("#doc-where")).to_be_visible()
        expect(phone.locator("#similar li").first).not_to_contain_text("Looking")
        _shot(phone, "phone")
    finally:
        context.close()


def test_tree_render_time_2000_documents_100_folders(
    browser: Browser, server: Server, user: str
) -> None:
    """Builds 100 folders and 2,000 documents over the API, then times the tree in the page."""
    token = server.cli("users", "token", user)
    rng = random.Random(1)
    vocabulary = [
        f"{a}{b}"
        for a in ("alpha", "beta", "gamma", "delta", "omega")
        for b in ("stone", "river", "cloud", "forest", "signal", "ledger", "engine", "garden")
    ]
    folders: list[int] = []
    for top in range(10):
        parent = _api(server, token, "POST", "/api/folders", {"name": f"area {top}"})
        folders.append(parent["id"])  # type: ignore[index]
        for sub in range(9):
            child = _api(
                server,
                token,
                "POST",
                "/api/folders",
                {"name": f"topic {top}.{sub}", "parent_id": parent["id"]},  # type: ignore[index]
            )
            folders.append(child["id"])  # type: ignore[index]
    assert len(folders) == 100
    docs = []
    for i in range(2000):
        words = " ".join(rng.choice(vocabulary) for _ in range(40))
        folder = folders[i % 100] if i < 1900 else None  # the last 100 arrive unfiled
        docs.append(
            {"title": f"document {i:04d}", "text": f"{words} number{i}", "folder_id": folder}
        )
    for lo in range(0, 2000, 250):
        _api(server, token, "POST", "/api/documents/batch", {"documents": docs[lo : lo + 250]})
    # A real extended tree: the 100 unfiled documents placed, with confidences.
    job = _api(server, token, "POST", "/api/recluster", {"method": "hac"})
    deadline = time.monotonic() + 300
    while job["state"] not in ("done", "failed", "stale"):  # type: ignore[index]
        assert time.monotonic() < deadline, f"recluster did not finish: {job}"
        time.sleep(0.5)
        job = _api(server, token, "GET", f"/api/jobs/{job['id']}", None)  # type: ignore[index]
    assert job["state"] == "done", job  # type: ignore[index]

    context = browser.new_context(base_url=server.url, viewport={"width": 1360, "height": 860})
    page = context.new_page()
    try:
        login(page, user)
        # The page's script defines window.foldwise after the first paint; wait for both.
        page.wait_for_function("() => (window.foldwise?.state?.timings ?? null) !== null")
        first = page.evaluate("window.foldwise.state.timings")
        # Every folder open: all 2,000 documents and 100 folders in the DOM at once.
        expanded = page.evaluate(
            """() => {
              const s = window.foldwise.state;
              for (const k of s.tree.folders.keys()) s.expanded.add(k);
              const t0 = performance.now();
              window.foldwise.renderTree();
              void document.querySelector('#tree').offsetHeight;
              return {render: performance.now() - t0,
                      nodes: document.querySelectorAll('#tree [role=treeitem]').length};
            }"""
        )
        reload_ms = page.evaluate(
            """async () => { const t0 = performance.now(); await window.foldwise.loadTree();
                              return performance.now() - t0; }"""
        )
        print(
            f"\ntree render, 2,000 documents / 100 folders: first load {first['total']:.0f} ms "
            f"(fetch {first['fetch']:.0f}, build {first['build']:.0f}, "
            f"draw {first['render']:.0f}); "
            f"all {expanded['nodes']} nodes expanded: draw {expanded['render']:.0f} ms; "
            f"reload with everything expanded: {reload_ms:.0f} ms"
        )
        assert expanded["nodes"] >= 2100  # 100 folders, 2,000 documents (+ "not placed yet")
        assert page.locator("#tree .node.doc").count() == 2000
        assert page.locator("#tree .node.doc.suggested").count() == 100
    finally:
        context.close()
