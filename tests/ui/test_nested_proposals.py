"""A proposal nested in another, in the browser: shown inside it, without buttons of its own,
and made a subfolder when the outer one is accepted (docs/ui.md, "How a critique shows").

The tree version is written into the server's database as a recluster job stores one, so
that the nesting is known exactly (a recluster of a tiny corpus nests nothing)."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect
from sqlalchemy import select
from sqlalchemy.orm import Session

from foldwise.service import models  # noqa: F401  (every table, for the foreign keys)
from foldwise.service.db import make_engine
from foldwise.service.documents.models import Document
from foldwise.service.folders.models import Folder
from foldwise.service.recluster.core_adapter import PlacementOut, Proposal, ReclusterOutput
from foldwise.service.recluster.jobs.store import store_version
from foldwise.service.recluster.tree.versions import latest_version
from foldwise.service.users import service as users

from .conftest import Server, login, topic_text
from .test_critiques import folder, upload, wait_for_tree_version
from .test_pages import import_corpus

pytestmark = pytest.mark.browser


def _store_nested_version(server: Server, name: str, under: str | None = None) -> None:
    """The next version of ``name``'s tree: the unfiled notes proposed as "garden-notes", its
    last three nested in it as "seed-notes"; inside the top-level folder ``under`` if given
    (placed at .8 there), else at the top level."""
    engine = make_engine(f"sqlite:///{server.data_dir / 'foldwise.sqlite3'}")
    with Session(engine) as session:
        account = users.get_by_name(session=session, name=name)
        assert account is not None
        unfiled = sorted(
            session.scalars(
                select(Document.id).where(
                    Document.user_id == account.id, Document.folder_id.is_(None)
                )
            )
        )
        inner = unfiled[3:]
        parent = None
        if under is not None:
            parent = session.scalar(
                select(Folder.id).where(Folder.user_id == account.id, Folder.name == under)
            )
            assert parent is not None
        out = ReclusterOutput(
            doc_ids=unfiled,
            linkage=[],
            proposals=[
                Proposal(0, parent, "garden-notes", ["garden"], unfiled, 0.3),
                Proposal(1, None, "seed-notes", ["seed"], inner, 0.4, parent_index=0),
            ],
            placements=[
                PlacementOut(d, None, 1 if d in inner else 0, 0.8, [], None, None) for d in unfiled
            ],
            stats={},
        )
        latest = latest_version(session=session, user_id=account.id)
        number = 1 + (latest.number if latest else 0)
        store_version(session, account.id, None, number, "biihac", 0, out)  # type: ignore[arg-type]
        session.commit()
    engine.dispose()


def _open_nested_proposal(page: Page, user: str, server: Server, under: str | None = None) -> None:
    """Logged in as ``user``, with "seed-notes" proposed inside "garden-notes"."""
    login(page, user)
    import_corpus(page, per_folder=1)
    upload(page, [(f"garden{i}.txt", topic_text("gardening", i)) for i in range(6)])
    # The upload starts a recluster: the stored version comes after its version.
    wait_for_tree_version(page, 1)
    _store_nested_version(server, user, under)
    page.reload()


def test_a_nested_proposal_is_accepted_with_the_outer_one(
    page: Page, user: str, server: Server
) -> None:
    _open_nested_proposal(page, user, server)
    outer = folder(page, "garden-notes", "proposed")
    accept = outer.locator(":scope > .proposal-bar .act-accept")
    expect(accept).to_have_count(1)
    # Its tooltip says that Accept brings the proposed subfolders along.
    expect(accept).to_have_attribute("title", re.compile("with its proposed subfolders"))
    outer.locator(":scope > .row").click()
    page.keyboard.press("ArrowRight")
    inner = folder(page, "seed-notes", "proposed")
    expect(inner).to_be_visible()
    # Accepted or rejected only with the outer one: no buttons of its own, and a note why.
    expect(inner.locator(".act-accept, .act-reject, .act-rename")).to_have_count(0)
    expect(inner.locator(".nested-note")).to_contain_text("proposal above")
    outer.locator(":scope > .proposal-bar .act-accept").click()
    made = folder(page, "garden-notes")
    expect(made).to_have_count(1)
    made.locator(":scope > .row").click()
    page.keyboard.press("ArrowRight")
    expect(folder(page, "seed-notes")).to_have_count(1)
    expect(folder(page, "garden-notes", "proposed")).to_have_count(0)
    expect(folder(page, "seed-notes", "proposed")).to_have_count(0)


def test_a_divided_proposal_can_be_accepted_as_one_folder(
    page: Page, user: str, server: Server
) -> None:
    _open_nested_proposal(page, user, server)
    folder(page, "garden-notes", "proposed").locator(":scope > .row").click()
    # Its page lists the nested proposal drawn as a proposal, not as one of your folders.
    expect(page.locator("#folder-view li[data-folder].proposed")).to_have_text("seed-notes 3")
    one = page.locator("#proposal-accept-one")
    expect(one).to_have_text("Accept as one folder")
    one.click()
    made = folder(page, "garden-notes")
    expect(made).to_have_count(1)
    expect(made.locator(":scope > .row .count")).to_have_text("6")
    # The open proposal was followed to the folder it became: all six directly in it.
    view = page.locator("#folder-view")
    expect(page.locator("#folder-title")).to_have_text("garden-notes")
    expect(view.locator("li[data-doc]")).to_have_count(6)
    expect(view.locator("li[data-folder]")).to_have_count(0)
    expect(folder(page, "seed-notes", "proposed")).to_have_count(0)


def test_a_proposal_shows_how_sure_its_place_is_not_a_percentage_per_page(
    page: Page, user: str, server: Server
) -> None:
    """A page in a proposal gets no percentage in the tree; its page says how likely it
    belongs under the existing folder the proposal lies in (docs/ui.md, "The inbox")."""
    _open_nested_proposal(page, user, server, under="cooking")
    cooking = folder(page, "cooking")
    if cooking.get_attribute("aria-expanded") != "true":
        cooking.locator(":scope > .row").click()
    outer = folder(page, "garden-notes", "proposed")
    if outer.get_attribute("aria-expanded") != "true":
        outer.locator(":scope > .row").click()
    pages = outer.locator(".doc.suggested")
    expect(pages).to_have_count(3)  # its own; the nested proposal holds the other three
    expect(outer.locator(".doc.suggested .conf")).to_have_count(0)
    pages.first.click()
    expect(page.locator("#doc-under")).to_have_text("80% that it belongs under cooking")
    expect(page.locator("#doc-where")).not_to_contain_text("confident")
