"""Browser tests of issue 11 item 1: the person manages their own tree in the UI (folders,
documents, a selection) by mouse, context menu and keyboard, through the API's checks."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from .conftest import login
from .test_critiques import folder, wait_for_tree_version
from .test_pages import import_corpus

pytestmark = pytest.mark.browser


def settled(page: Page) -> None:
    """Wait for the recluster an import starts: its new tree redraws the rows under the mouse."""
    wait_for_tree_version(page, 1)


def menu_pick(page: Page, label: str) -> None:
    page.locator("#context-menu [role=menuitem]", has_text=label).click()


def name_dialog(page: Page, value: str) -> None:
    expect(page.locator("#name-dialog")).to_be_visible()
    page.fill("#name-input", value)
    page.press("#name-input", "Enter")
    expect(page.locator("#name-dialog")).to_be_hidden()


def test_folders_create_rename_move_delete_and_undo(page: Page, user: str) -> None:
    login(page, user)
    import_corpus(page, per_folder=2)
    settled(page)
    page.click("#new-folder-btn")
    name_dialog(page, "Bills")
    expect(folder(page, "Bills")).to_have_count(1)

    folder(page, "Bills").locator(".row").first.click(button="right")
    menu_pick(page, "Rename")
    name_dialog(page, "Invoices")
    expect(folder(page, "Invoices")).to_have_count(1)
    expect(folder(page, "Bills")).to_have_count(0)

    # Drag "finance" onto "Invoices": it moves there (a folder_move in the history).
    folder(page, "finance").locator(".row").first.drag_to(
        folder(page, "Invoices").locator(".row").first
    )
    moved = folder(page, "Invoices").locator(".folder.existing", has_text="finance")
    expect(moved).to_have_count(1)
    expect(moved).to_have_attribute("aria-level", "2")

    # Deleting a folder that is not empty says what happens: documents kept, unfiled.
    folder(page, "Invoices").locator(".row").first.click(button="right")
    menu_pick(page, "Delete")
    dialog = page.locator("#confirm-dialog")
    expect(dialog).to_contain_text("1 subfolder")
    expect(dialog).to_contain_text("2 documents are kept")
    page.click("#confirm-ok")
    expect(folder(page, "Invoices")).to_have_count(0)
    expect(page.locator("#tree-summary")).to_contain_text("6 documents")  # none lost
    expect(page.locator("#tree .folder.existing", has_text="finance")).to_have_count(0)
    # Undo, one click away, brings both folders back with their documents.
    page.locator("#toasts .toast", has_text="Deleted the folder").get_by_role(
        "button", name="Undo"
    ).click()
    expect(folder(page, "Invoices")).to_have_count(1)
    folder(page, "Invoices").locator(".name").first.click()
    expect(folder(page, "Invoices").locator(".folder", has_text="finance")).to_have_count(1)


def test_documents_rename_take_out_and_delete_from_the_keyboard(page: Page, user: str) -> None:
    login(page, user)
    import_corpus(page, per_folder=2)
    settled(page)
    cooking = folder(page, "cooking")
    cooking.locator(".name").first.click()
    cooking.locator(".doc", has_text="cooking-0").click()
    page.keyboard.press("F2")
    name_dialog(page, "Bread notes")
    expect(cooking.locator(".doc", has_text="Bread notes")).to_have_count(1)

    # The context menu from the keyboard: Shift+F10, arrows, Enter.
    cooking.locator(".doc", has_text="Bread notes").click()
    page.keyboard.press("Shift+F10")
    expect(page.locator("#context-menu")).to_be_visible()
    items = page.locator("#context-menu [role=menuitem]")
    for _ in range(3):  # Open, Rename…, Move to…, Take out of folder
        page.keyboard.press("ArrowDown")
    expect(items.nth(3)).to_be_focused()
    expect(items.nth(3)).to_have_text("Take out of folder")
    page.keyboard.press("Enter")
    expect(cooking.locator(".doc:not(.suggested)", has_text="Bread notes")).to_have_count(0)
    # Unfiled now (kept, shown wherever Foldwise suggests it), not deleted.
    page.wait_for_function(
        "() => [...window.foldwise.state.tree.docs.values()]"
        ".some(d => d.title === 'Bread notes' && !d.filed)"
    )

    # Delete asks first and says it cannot be undone.
    row = page.locator("#tree .doc", has_text="cooking-1")
    row.click()
    page.keyboard.press("Delete")
    expect(page.locator("#confirm-dialog")).to_contain_text("cannot be undone")
    page.click("#confirm-ok")
    expect(page.locator("#tree .doc", has_text="cooking-1")).to_have_count(0)
    page.reload()
    expect(page.locator("#tree .folder", has_text="astronomy").first).to_be_visible()
    expect(page.locator("#tree .doc", has_text="cooking-1")).to_have_count(0)


def test_multi_select_move_to_and_delete(page: Page, user: str) -> None:
    login(page, user)
    import_corpus(page, per_folder=3)
    settled(page)
    cooking = folder(page, "cooking")
    cooking.locator(".name").first.click()
    cooking.locator(".doc", has_text="cooking-0").click()
    cooking.locator(".doc", has_text="cooking-2").click(modifiers=["Shift"])
    expect(page.locator("#selection-count")).to_have_text("3 selected")
    cooking.locator(".doc", has_text="cooking-1").click(modifiers=["Control"])
    expect(page.locator("#selection-count")).to_have_text("2 selected")
    page.click("#sel-move")
    page.fill("#move-filter", "")
    page.press("#move-filter", "ArrowDown")  # astronomy, cooking, finance: down to cooking
    page.press("#move-filter", "ArrowDown")  # finance
    expect(page.locator("#move-list li.active")).to_have_text("finance")
    page.press("#move-filter", "Enter")
    finance = folder(page, "finance")
    expect(finance.locator(".doc:not(.suggested)", has_text="cooking-")).to_have_count(2)
    expect(page.locator("#selection-bar")).to_be_hidden()
    undo = page.locator("#toasts .toast", has_text="Filed 2 documents").get_by_role(
        "button", name="Undo"
    )
    expect(undo).to_be_visible()

    # Checkboxes in the folder listing select too; the selection is deleted after a question.
    finance.locator(".name").first.click()
    listing = page.locator("#folder-view .listing li[data-doc]:not(.suggested)")
    expect(listing).to_have_count(5)
    listing.filter(has_text="cooking-0").locator(".pick").check()
    listing.filter(has_text="cooking-2").locator(".pick").check()
    expect(page.locator("#selection-count")).to_have_text("2 selected")
    expect(page.locator("#doc-view")).to_be_hidden()
    page.click("#sel-delete")
    expect(page.locator("#confirm-dialog")).to_contain_text("Delete 2 documents?")
    page.click("#confirm-ok")
    expect(page.locator("#folder-view .listing li[data-doc]:not(.suggested)")).to_have_count(3)
    expect(page.locator("#tree .doc", has_text=re.compile("cooking-[02]"))).to_have_count(0)
