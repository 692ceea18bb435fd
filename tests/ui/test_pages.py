"""Browser tests of what works without a recluster: login, import, upload, search, the
document panel, keyboard navigation and the errors shown in the page."""

from __future__ import annotations

import io
import re
import zipfile

import pytest
from playwright.sync_api import Locator, Page, Route, expect
from sqlalchemy.orm import Session

from foldwise.service.db import make_engine
from foldwise.service.users import service as users

from .conftest import PASSWORD, Server, corpus_zip, login, payload, topic_text

pytestmark = pytest.mark.browser


def import_corpus(page: Page, per_folder: int = 5) -> None:
    page.click("#upload-btn")
    page.set_input_files(
        "#file-input",
        files=[payload("folders.zip", corpus_zip(per_folder), "application/zip")],
    )
    expect(page.locator("#upload-results tr[data-status]")).to_have_count(1)
    expect(page.locator("#upload-results tbody tr").first).to_contain_text("imported")


def test_login_errors_and_logout(page: Page, user: str) -> None:
    page.goto("/")
    expect(page).to_have_url(re.compile(r"/login$"))
    page.fill("#login-name", user)
    page.fill("#login-password", "not the password")
    page.click("#login-submit")
    expect(page.locator("#login-error")).to_have_text("Wrong name or password.")
    expect(page.locator("body")).not_to_contain_text("detail")
    login(page, user)
    expect(page.locator("#user-name")).to_have_text(user)
    expect(page.locator("#tree")).to_contain_text("No folders yet")
    page.click("#logout-btn")
    expect(page).to_have_url(re.compile(r"/login$"))
    page.goto("/")
    expect(page).to_have_url(re.compile(r"/login$"))


def test_import_and_upload_show_per_file_results(page: Page, user: str) -> None:
    login(page, user)
    import_corpus(page)
    row = page.locator("#upload-results tbody tr").first
    expect(row).to_contain_text("15 documents in 3 new folders")
    for name in ("cooking", "astronomy", "finance"):
        expect(page.locator(f"#tree .folder:has-text('{name}')")).to_have_count(1)
    expect(page.locator("#tree .folder", has_text="cooking").locator(".count")).to_have_text("5")

    new = topic_text("gardening", 1).encode()
    page.set_input_files(
        "#file-input",
        files=[
            payload("garden-1.txt", new),
            payload("garden-again.txt", new),
            payload("tool.exe", b"MZ\x90\x00\x03", "application/octet-stream"),
            payload("broken.zip", b"PK\x03\x04 not a zip", "application/zip"),
            payload("empty.txt", b""),
        ],
    )
    rows = page.locator("#upload-results tbody tr")
    expect(rows).to_have_count(6)
    expect(rows.nth(5)).to_have_attribute("data-status", re.compile("."))
    statuses = [rows.nth(i).get_attribute("data-status") for i in range(1, 6)]
    assert statuses == ["stored", "duplicate", "rejected", "rejected", "rejected"]
    expect(rows.nth(2)).to_contain_text("already stored")
    expect(rows.nth(3).locator(".detail")).not_to_be_empty()
    expect(rows.nth(4).locator(".detail")).to_contain_text(re.compile("zip", re.I))
    # The new document shows in the tree, unfiled until a recluster places it.
    expect(page.locator("#tree .doc.suggested, #tree .unfiled")).not_to_have_count(0)


def test_drop_files_on_the_page(page: Page, user: str) -> None:
    login(page, user)
    page.evaluate(
        """() => {
          const dt = new DataTransfer();
          const text = "Telescope notes: galaxy, nebula, comet.";
          dt.items.add(new File([text], "sky.txt", {type: "text/plain"}));
          const ev = new DragEvent("drop", {dataTransfer: dt, bubbles: true, cancelable: true});
          document.querySelector("#content").dispatchEvent(ev);
        }"""
    )
    row = page.locator("#upload-results tbody tr").first
    expect(row).to_have_attribute("data-status", "stored")
    expect(row).to_contain_text("sky.txt")


def test_search_opens_document_panel(page: Page, user: str) -> None:
    login(page, user)
    import_corpus(page)
    page.fill("#search", "telescope galaxy")
    hits = page.locator("#search-results li")
    expect(hits).to_have_count(5)
    expect(hits.first).to_contain_text("astronomy-")
    expect(hits.first.locator("mark").first).to_be_visible()
    hits.first.click()
    expect(page.locator("#doc-title")).to_contain_text("astronomy-")
    expect(page.locator("#doc-where")).to_contain_text("astronomy")
    expect(page.locator("#doc-text")).to_contain_text("telescope")
    # The document is revealed and selected in the tree.
    expect(page.locator("#tree .doc.selected")).to_contain_text("astronomy-")
    # Similar documents come from the same topic.
    similar = page.locator("#similar li a")
    expect(similar).to_have_count(5)
    expect(similar.first).to_contain_text("astronomy-")
    # The original file downloads.
    href = page.get_attribute("#download-link", "href")
    assert href is not None
    res = page.request.get(href)
    assert res.status == 200 and b"telescope" in res.body()
    page.fill("#search", "zyzzyva")
    expect(page.locator("#search-empty")).to_be_visible()


def test_keyboard_navigation(page: Page, user: str) -> None:
    login(page, user)
    import_corpus(page, per_folder=2)
    page.locator("#tree [role=treeitem]").first.focus()
    first = page.locator("#tree > [role=treeitem]").first
    expect(first).to_have_attribute("aria-expanded", "false")
    page.keyboard.press("ArrowRight")
    expect(first).to_have_attribute("aria-expanded", "true")
    page.keyboard.press("ArrowDown")
    focused = page.locator("#tree .node:focus")
    expect(focused).to_have_class(re.compile(r"\bdoc\b"))
    page.keyboard.press("Enter")
    expect(page.locator("#doc-title")).to_be_visible()
    page.keyboard.press("ArrowLeft")
    expect(page.locator("#tree .node:focus")).to_have_attribute("aria-expanded", "true")
    page.keyboard.press("ArrowLeft")
    expect(first).to_have_attribute("aria-expanded", "false")
    page.keyboard.press("ArrowDown")
    expect(page.locator("#tree .node:focus .name")).to_have_text(
        page.locator("#tree > [role=treeitem]").nth(1).locator(".name").first.inner_text()
    )
    # Expanded folders and the selection survive a reload.
    page.keyboard.press("Enter")
    page.reload()
    expect(page.locator("#tree > [role=treeitem]").nth(1)).to_have_attribute(
        "aria-expanded", "true"
    )


def test_expired_session_is_shown_in_the_page(page: Page, user: str, server: Server) -> None:
    login(page, user)
    import_corpus(page, per_folder=1)
    # Changing the password ends every browser session of the user: the real expiry path.
    engine = make_engine(f"sqlite:///{server.data_dir / 'foldwise.sqlite3'}")
    with Session(engine) as session:
        account = users.get_by_name(session=session, name=user)
        assert account is not None
        users.set_password(session=session, user=account, password="a new password 123")
        session.commit()
    engine.dispose()
    page.fill("#search", "cooking")
    banner = page.locator("#banner")
    expect(banner).to_be_visible()
    expect(banner).to_contain_text("session has expired")
    expect(page.locator("#search-view")).not_to_contain_text("{")
    page.click("#relogin")
    expect(page.locator("#login-error")).to_contain_text("session has expired")
    login(page, user, "a new password 123")
    expect(page.locator("#tree .folder", has_text="cooking")).to_have_count(1)


def test_job_error_is_shown_in_the_page(page: Page, user: str) -> None:
    login(page, user)
    # A recluster of an empty account (the button is disabled there, the API is not) fails in
    # the worker: the page, opened again, says why.
    token = next(c["value"] for c in page.context.cookies() if c["name"] == "foldwise_csrf")
    started = page.request.post("/api/recluster", data={}, headers={"X-CSRF-Token": token})
    assert started.status == 202, started.text()
    page.reload()
    job = page.locator("#job")
    expect(job).to_have_attribute("data-state", "failed", timeout=60_000)
    expect(page.locator("#job-label")).to_contain_text("Recluster failed: nothing to cluster")
    expect(job).to_have_class(re.compile("failed"))


def _upload_a_recipe(page: Page, user: str) -> None:
    """Log in, import the corpus (2 per folder) and upload an unfiled cooking recipe."""
    login(page, user)
    import_corpus(page, per_folder=2)
    page.click("#upload-btn")
    page.set_input_files(
        "#file-input", files=[payload("recipe.txt", topic_text("cooking", 9).encode())]
    )
    expect(page.locator("#upload-results tbody tr").last).to_have_attribute("data-status", "stored")


def _recipe_hit(page: Page) -> Locator:
    """The uploaded recipe among the search results, by its title: its label says "unfiled"
    or, once a suggestion for it has arrived, "suggested: cooking"."""
    title = page.locator(":scope > div > strong", has_text=re.compile("^recipe$"))
    return page.locator("#search-results li").filter(has=title)


def _filed_recipe(page: Page) -> Locator:
    """The recipe drawn as filed (not suggested) in the top-level cooking folder."""
    cooking = page.locator("#tree > .folder").filter(
        has=page.locator(":scope > .row > .name", has_text=re.compile("^cooking$"))
    )
    return cooking.locator(".node.doc:not(.suggested)", has_text="recipe")


def test_move_to_picker_files_a_document(page: Page, user: str) -> None:
    _upload_a_recipe(page, user)
    page.fill("#search", "recipe oven")
    _recipe_hit(page).click()
    expect(page.locator("#doc-title")).to_have_text("recipe")
    page.click("#move-btn")
    expect(page.locator("#move-dialog")).to_be_visible()
    page.fill("#move-filter", "cook")
    expect(page.locator("#move-list li[data-folder]")).to_have_count(1)
    page.press("#move-filter", "Enter")
    expect(page.locator("#move-dialog")).to_be_hidden()
    expect(page.locator("#doc-where")).to_contain_text("Filed in cooking")
    filed_recipe = _filed_recipe(page)
    expect(filed_recipe).to_have_count(1)
    page.click("#tab-history")
    expect(page.locator("#history-list > li").first).to_contain_text("recipe")
    # The move holds after a reload: it is stored, not only drawn.
    page.reload()
    expect(filed_recipe).to_have_count(1)


def test_a_tree_read_while_a_move_is_in_flight_does_not_undo_it(page: Page, user: str) -> None:
    # A job that ends while a move is on its way reloads the tree; the server may answer that
    # read before it has the move. Both are held here: the move's request, and every job read
    # (so that no later job reload can mend the tree by chance).
    _upload_a_recipe(page, user)
    page.route("**/api/jobs**", lambda route: None)
    held: list[Route] = []
    page.route("**/api/critiques", lambda route: held.append(route))
    page.fill("#search", "recipe oven")
    _recipe_hit(page).click()
    page.click("#move-btn")
    page.fill("#move-filter", "cook")
    expect(page.locator("#move-list li[data-folder]")).to_have_count(1)
    with page.expect_request("**/api/critiques"):
        page.press("#move-filter", "Enter")
    # The read the job's end starts, answered by a server that has not seen the move yet.
    page.evaluate("() => window.foldwise.loadTree().then(() => null)")
    assert len(held) == 1
    held[0].continue_()
    filed_recipe = _filed_recipe(page)
    expect(filed_recipe).to_have_count(1)
    expect(page.locator("#tree .node.doc", has_text="recipe")).to_have_count(1)


def test_each_person_sees_only_their_own_documents(page: Page, user: str, server: Server) -> None:
    login(page, user)
    import_corpus(page, per_folder=1)
    page.fill("#search", "telescope")
    hit = page.locator("#search-results li").first
    expect(hit).to_be_visible()
    theirs = hit.get_attribute("data-doc")
    page.click("#logout-btn")
    other = f"{user}b"
    server.cli("users", "create", other, "--password", PASSWORD)
    login(page, other)
    expect(page.locator("#tree")).to_contain_text("No folders yet")
    page.fill("#search", "telescope")
    expect(page.locator("#search-empty")).to_be_visible()
    # Another person's document cannot be opened, not even through the UI's own endpoints.
    assert page.request.get(f"/api/documents/{theirs}").status == 404
    assert page.request.get(f"/ui/api/documents/{theirs}/similar").status == 404


def test_broken_links_show_a_page_not_json(page: Page, user: str) -> None:
    login(page, user)
    page.goto("/api/documents/999999/file")
    expect(page.locator("#page-error")).to_contain_text("not found")
    expect(page.locator("body")).not_to_contain_text('"detail"')
    page.goto("/no/such/page")
    expect(page.locator("#page-error")).to_be_visible()
    # API clients still get JSON.
    res = page.request.get("/api/documents/999999", headers={"Accept": "application/json"})
    assert res.status == 404 and "detail" in res.json()


def test_the_app_runs_under_its_content_security_policy(page: Page, user: str) -> None:
    """The CSP allows no inline script but the nonce'd import map: the app must still run,
    and the browser must report no violation."""
    violations: list[str] = []
    page.on(
        "console",
        lambda message: (
            violations.append(message.text) if "Content Security Policy" in message.text else None
        ),
    )
    response = page.goto("/login")
    assert response is not None
    assert "script-src 'self'" in response.headers["content-security-policy"]
    login(page, user)
    expect(page.locator("#user-name")).to_have_text(user)  # the modules ran
    expect(page.locator("#tree")).to_be_visible()
    assert violations == []


def test_the_export_link_downloads_the_tree_as_a_zip(page: Page, user: str) -> None:
    login(page, user)
    import_corpus(page)
    with page.expect_download() as download:
        page.click("#export-link")
    path = download.value.path()
    assert path is not None
    with zipfile.ZipFile(path) as exported:
        names = exported.namelist()
    with zipfile.ZipFile(io.BytesIO(corpus_zip(5))) as imported:
        originals = sorted(n for n in imported.namelist() if not n.endswith("/"))
    assert sorted(n for n in names if not n.endswith("/")) == originals
