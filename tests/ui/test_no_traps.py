"""Browser tests of issue 11 item 3, no traps: who filed a document is said only when known,
Reject asks first, a proposal being read survives a recluster, Undo follows every action."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from .conftest import login, payload, topic_text
from .test_critiques import folder, upload, wait_for_tree_version
from .test_pages import import_corpus

pytestmark = pytest.mark.browser


def open_doc(page: Page, folder_name: str, title: str) -> None:
    row = folder(page, folder_name)
    if row.get_attribute("aria-expanded") != "true":
        row.locator(".row").first.click()
    row.locator(".doc", has_text=title).click()
    expect(page.locator("#doc-title")).to_have_text(title)


def test_filed_by_is_said_only_when_the_person_did_it_and_undo_is_one_click(
    page: Page, user: str
) -> None:
    login(page, user)
    import_corpus(page, per_folder=2)
    open_doc(page, "cooking", "cooking-0")
    where = page.locator("#doc-where")
    expect(where).to_contain_text("came in this folder with your import")
    expect(where).not_to_contain_text("you put it there")

    page.click("#move-btn")
    page.fill("#move-filter", "astro")
    page.press("#move-filter", "Enter")
    expect(where).to_contain_text("Filed in astronomy")
    expect(where).to_contain_text("you put it there")

    # The message after the move carries its Undo: one click puts the note back.
    undo = page.locator("#toasts .toast", has_text="Moved").get_by_role("button", name="Undo")
    expect(undo).to_be_visible()
    undo.click()
    expect(where).to_contain_text("Filed in cooking")
    expect(where).to_contain_text("came in this folder with your import")
    page.click("#tab-history")
    expect(page.locator("#history-list > li").first).to_have_class(re.compile("undone"))


def test_reject_asks_first_and_a_proposal_that_goes_away_is_explained(
    page: Page, user: str
) -> None:
    login(page, user)
    import_corpus(page)
    upload(page, [(f"garden-{i}.txt", topic_text("gardening", i)) for i in range(6)])
    version = wait_for_tree_version(page, 1)
    proposal = page.locator("#tree .folder.proposed").first
    proposal.locator(".name").first.click()
    expect(page.locator("#proposal-card")).to_be_visible()
    name = page.locator("#folder-title").inner_text()

    # Reject asks first and says that nothing is filed; Cancel changes nothing.
    page.click("#proposal-reject")
    dialog = page.locator("#confirm-dialog")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("nothing is filed")
    expect(dialog).to_contain_text("stay unfiled")
    page.click("#confirm-cancel")
    expect(dialog).to_be_hidden()
    expect(folder(page, name, "proposed")).to_have_count(1)
    page.click("#tab-history")
    expect(page.locator("#history-list > li").first).to_contain_text("Imported")
    expect(page.locator("#history-list")).not_to_contain_text("Rejected")

    # Its documents get filed elsewhere (through the API, as another tab would): after the
    # next tree the proposal is gone, and the page says so instead of going blank.
    members = page.evaluate(
        "key => window.foldwise.state.tree.folders.get(key).docs.map(d => d.id)",
        page.evaluate("window.foldwise.state.openProposal.key"),
    )
    cooking = page.evaluate(
        "[...window.foldwise.state.tree.folders.values()].find(f => f.name === 'cooking').id"
    )
    token = next(c["value"] for c in page.context.cookies() if c["name"] == "foldwise_csrf")
    for doc_id in members:
        answer = page.request.patch(
            f"/api/documents/{doc_id}",
            data={"folder_id": cooking},
            headers={"X-CSRF-Token": token},
        )
        assert answer.ok, answer.text()
    page.click("#recluster-btn")
    wait_for_tree_version(page, version + 1)
    expect(page.locator("#proposal-gone")).to_contain_text(f"“{name}” is no longer proposed")


def test_undo_after_adding_documents(page: Page, user: str) -> None:
    login(page, user)
    import_corpus(page, per_folder=1)
    expect(page.locator("#tree-summary")).to_contain_text("3 documents")
    page.set_input_files(
        "#file-input",
        files=[
            payload("pie.txt", topic_text("cooking", 5).encode()),
            payload("moon.txt", topic_text("astronomy", 5).encode()),
        ],
    )
    expect(page.locator("#tree-summary")).to_contain_text("5 documents")
    page.locator("#toasts .toast", has_text="Added 2 documents").get_by_role(
        "button", name="Undo"
    ).click()
    expect(page.locator("#tree-summary")).to_contain_text("3 documents")
    page.fill("#search", "moon")
    expect(page.locator("#search-empty")).to_be_visible()


def test_a_reload_keeps_the_keyboard_focus_and_a_name_being_typed(page: Page, user: str) -> None:
    """The tree reloads whenever a recluster ends. It must not drop a keyboard user out of
    the tree, nor the name someone is typing for a proposal (the reload waits for it)."""
    login(page, user)
    import_corpus(page)
    upload(page, [(f"garden-{i}.txt", topic_text("gardening", i)) for i in range(6)])
    wait_for_tree_version(page, 1)
    second = page.locator("#tree > [role=treeitem]").nth(1)
    second.focus()
    key = second.get_attribute("data-key")
    page.evaluate("window.foldwise.loadTree()")
    expect(page.locator("#tree .node:focus")).to_have_attribute("data-key", key or "")
    page.keyboard.press("ArrowDown")  # the keys still move through the tree
    expect(page.locator("#tree .node:focus")).not_to_have_attribute("data-key", key or "")

    proposal = page.locator("#tree .folder.proposed").first
    proposal.locator(".row").first.hover()
    proposal.locator(".act-rename").click()
    page.fill("#tree .rename-input", "Gard")
    page.evaluate("window.foldwise.loadTree()")
    page.type("#tree .rename-input", "en")
    expect(page.locator("#tree .rename-input")).to_have_value("Garden")
    page.press("#tree .rename-input", "Enter")
    expect(folder(page, "Garden")).to_have_count(1)
