"""Browser tests of the learning loop: recluster progress, proposals, moves, questions, undo.

The corpus is tiny (three folders of five notes) so that each recluster takes a moment; the
new notes hold a fourth topic that has no folder yet, which the tree should propose.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Locator, Page, expect

from .conftest import TOPICS, login, payload, topic_text
from .test_pages import import_corpus

RECLUSTER_TIMEOUT_MS = 120_000

pytestmark = pytest.mark.browser


def mixed_text(i: int) -> str:
    """A note that shares words with two topics, so that Foldwise hesitates between them."""
    a, b = TOPICS["cooking"].split(), TOPICS["finance"].split()
    return f"Mixed note {i}\n\n" + " ".join(a[i : i + 6] * 2 + b[i : i + 6] * 2) + "\n"


def upload(page: Page, files: list[tuple[str, str]]) -> None:
    page.click("#upload-btn")
    before = page.locator("#upload-results tbody tr").count()
    page.set_input_files(
        "#file-input",
        files=[payload(n, t.encode()) for n, t in files],
    )
    rows = page.locator("#upload-results tbody tr")
    expect(rows).to_have_count(before + len(files))
    expect(rows.last).to_have_attribute("data-status", "stored")


def folder(page: Page, name: str, kind: str = "existing") -> Locator:
    """The tree's folder called exactly ``name`` (not one that merely holds such text)."""
    own_name = page.locator(":scope > .row > .name", has_text=re.compile(f"^{re.escape(name)}$"))
    return page.locator(f"#tree .folder.{kind}").filter(has=own_name)


def wait_for_tree_version(page: Page, at_least: int) -> int:
    """Wait for the progress bar to finish and the tree to show version ``at_least`` or newer."""
    page.wait_for_function(
        "n => (window.foldwise?.state?.version ?? -1) >= n"
        " && window.foldwise.state.tree && !window.foldwise.state.tree.outdated",
        arg=at_least,
        timeout=RECLUSTER_TIMEOUT_MS,
    )
    expect(page.locator("#job")).to_have_attribute(
        "data-state", "done", timeout=RECLUSTER_TIMEOUT_MS
    )
    return int(page.evaluate("window.foldwise.state.version"))


def test_recluster_proposal_move_question_undo(page: Page, user: str) -> None:
    login(page, user)
    import_corpus(page)
    new = [(f"garden-{i}.txt", topic_text("gardening", i)) for i in range(6)]
    new += [(f"bake-{i}.txt", topic_text("cooking", 10 + i)) for i in range(2)]
    new += [(f"mixed-{i}.txt", mixed_text(i)) for i in range(2)]
    upload(page, new)

    # The upload starts a recluster; its progress bar runs and the new tree arrives.
    expect(page.locator("#job")).to_be_visible()
    version = wait_for_tree_version(page, 1)

    # A proposed folder for the new topic, drawn differently, with its top terms.
    proposal = page.locator("#tree .folder.proposed").first
    expect(proposal).to_be_visible()
    expect(proposal.locator(".row")).to_have_css("border-top-style", "dashed")
    proposal_name = proposal.locator(".name").first.inner_text()
    assert any(w in proposal_name for w in TOPICS["gardening"].split()), proposal_name
    # Its documents show no percentage: at the top level the placement's confidence is
    # 100% by definition (the mass of the whole tree), and says nothing of the new folder.
    if proposal.get_attribute("aria-expanded") != "true":
        proposal.locator(".row").first.click()
    member = proposal.locator(".doc.suggested").first
    expect(member).to_be_visible()
    expect(member.locator(".conf")).to_have_count(0)
    member.click()
    expect(page.locator("#doc-where")).to_contain_text("a proposed new folder")
    expect(page.locator("#doc-where")).not_to_contain_text("confident")
    # New cooking notes are suggested inside "cooking", with a confidence.
    cooking = folder(page, "cooking")
    if cooking.get_attribute("aria-expanded") != "true":
        cooking.locator(".row").first.click()
    suggested = cooking.locator(".doc.suggested", has_text="bake-0")
    expect(suggested).to_be_visible()
    expect(suggested.locator(".conf")).to_have_text(re.compile(r"^\d+%$"))
    suggested.click()
    expect(page.locator("#doc-where")).to_contain_text("suggests")
    expect(page.locator("#doc-where .chip").first).to_be_visible()

    # Accept the proposal: it becomes a real folder, its documents filed in it.
    job_before = page.evaluate("window.foldwise.state.job.id")
    proposal.locator(".row").first.hover()
    proposal.locator(".act-accept").click()
    accepted = folder(page, proposal_name)
    expect(accepted).to_have_count(1)
    expect(folder(page, proposal_name, "proposed")).to_have_count(0)

    # Drag a cooking note onto "finance": it stays there after the next recluster.
    source = cooking.locator(".doc", has_text="cooking-0")
    finance = folder(page, "finance")
    source.drag_to(finance.locator(".row").first)
    expect(finance.locator(".doc", has_text="cooking-0")).to_have_count(1)
    expect(finance.locator(".doc", has_text="cooking-0")).not_to_have_class(re.compile("pending"))
    expect(cooking.locator(".doc", has_text="cooking-0")).to_have_count(0)
    # The critiques start a recluster by themselves; the page finds it and shows its progress.
    page.wait_for_function(
        "id => window.foldwise?.state?.job && window.foldwise.state.job.id > id", arg=job_before
    )
    expect(page.locator("#job")).to_be_visible()
    version = wait_for_tree_version(page, version + 1)
    finance = folder(page, "finance")
    # The view kept its place: the folder stays open and the moved note stays selected.
    expect(finance).to_have_attribute("aria-expanded", "true")
    expect(page.locator("#tree .node.selected")).to_contain_text("cooking-0")
    expect(finance.locator(".doc:not(.suggested)", has_text="cooking-0")).to_have_count(1)

    # History shows the critiques, each with what it produced.
    page.click("#tab-history")
    history = page.locator("#history-list > li")
    expect(history.first).to_contain_text("Moved")
    expect(history.first).to_contain_text("cooking-0")
    expect(page.locator("#history-list")).to_contain_text("Accepted folder")

    # Which is closer? Answer one question; it becomes a triple in the history.
    page.click("#tab-questions")
    expect(page.locator("#closer-question")).to_be_visible(timeout=RECLUSTER_TIMEOUT_MS)
    expect(page.locator("#question-reason")).not_to_have_text(re.compile(r"document \d+"))
    anchor = page.locator("#closer-question .anchor strong").inner_text()
    closer = page.locator("#pick-b strong").inner_text()
    page.locator("#pick-b strong").click()
    page.click("#tab-history")
    latest = page.locator("#history-list > li").first
    expect(latest).to_contain_text("Answered")
    expect(latest.locator(".triples li").first).to_contain_text(f"{anchor} closer to {closer}")

    # Undo the move: the note leaves "finance" and the history marks the critique undone.
    move = page.locator("#history-list > li", has_text="Moved")
    move.locator(".act-undo").click()
    expect(move).to_have_class(re.compile("undone"))
    expect(finance.locator(".doc:not(.suggested)", has_text="cooking-0")).to_have_count(0)
    expect(page.locator("#tree .doc", has_text="cooking-0")).to_have_count(1)

    # The quality panel measures the newest tree against the person's folders.
    page.click("#tab-quality")
    expect(page.locator("#quality-report svg")).to_be_visible()
    expect(page.locator("#q-hcorr")).to_have_text(re.compile(r"^[01]\.\d{3}$"))
    expect(page.locator("#q-hai")).to_have_text(re.compile(r"^[01]\.\d{3}$"))
    expect(page.locator("#q-constraints")).to_have_text(re.compile(r"^\d+\.\d%$"))
    expect(page.locator("#quality-view")).to_contain_text("dendrogram of tree version")


def test_rename_reject_and_not_in_proposal(page: Page, user: str) -> None:
    login(page, user)
    import_corpus(page)
    upload(page, [(f"garden-{i}.txt", topic_text("gardening", i)) for i in range(6)])
    wait_for_tree_version(page, 1)
    proposal = page.locator("#tree .folder.proposed").first
    expect(proposal).to_be_visible()
    if proposal.get_attribute("aria-expanded") != "true":
        proposal.locator(".name").first.click()
    members = proposal.locator(".node.doc")
    expect(members.first).to_be_visible()
    # "Doesn't belong here" on a member of the proposal records a critique with triples.
    member = members.first.locator(".name").inner_text()
    members.first.click()
    page.click("#not-in-btn")
    page.click("#tab-history")
    latest = page.locator("#history-list > li").first
    expect(latest).to_contain_text("Doesn’t belong")
    expect(latest).to_contain_text(member)
    expect(latest.locator(".triples li").first).to_contain_text(f"than to {member}")

    # Rename: accept under a name of one's own.
    proposal = page.locator("#tree .folder.proposed").first
    proposal.locator(".row").first.hover()
    proposal.locator(".act-rename").click()
    page.fill("#tree .rename-input", "Garden")
    page.press("#tree .rename-input", "Enter")
    expect(folder(page, "Garden")).to_have_count(1)

    # Reject: notes on yet another topic form a new proposal; rejecting it removes it.
    version = int(page.evaluate("window.foldwise.state.version"))
    upload(page, [(f"music-{i}.txt", topic_text("music", i)) for i in range(6)])
    wait_for_tree_version(page, version + 1)
    music_words = re.compile("|".join(TOPICS["music"].split()))
    music = page.locator("#tree .folder.proposed").filter(
        has=page.locator(":scope > .proposal-bar .terms", has_text=music_words)
    )
    expect(music).to_have_count(1)
    name = music.locator(".name").first.inner_text()
    music.locator(".act-reject").click()
    expect(page.locator("#confirm-dialog")).to_contain_text("nothing is filed")
    page.click("#confirm-ok")
    expect(folder(page, name, "proposed")).to_have_count(0)
    undo = page.locator("#toasts .toast", has_text="rejected").get_by_role("button", name="Undo")
    expect(undo).to_be_visible()
    page.click("#tab-history")
    expect(page.locator("#history-list > li").first).to_contain_text("Rejected folder")


def test_a_question_can_be_skipped_or_answered_with_neither(page: Page, user: str) -> None:
    """Skip brings the next question at once; "Neither: it belongs elsewhere" is a move of
    the document asked about, to a folder the person picks, and then the next question."""
    login(page, user)
    import_corpus(page)
    upload(page, [(f"mixed-{i}.txt", mixed_text(i)) for i in range(4)])
    wait_for_tree_version(page, 1)
    page.click("#tab-questions")
    expect(page.locator("#closer-question")).to_be_visible(timeout=RECLUSTER_TIMEOUT_MS)
    anchor = page.locator("#closer-question .anchor strong")
    first = anchor.inner_text()
    page.click("#skip-question")
    expect(anchor).not_to_have_text(first)
    second = anchor.inner_text()
    assert second != first

    page.click("#neither-question")
    expect(page.locator("#move-dialog")).to_be_visible()
    expect(page.locator("#move-title")).to_contain_text(second)
    page.fill("#move-filter", "astro")
    page.press("#move-filter", "Enter")
    expect(page.locator("#move-dialog")).to_be_hidden()
    # The document is filed where the person said, and the panel asks about another one.
    expect(folder(page, "astronomy").locator(".doc", has_text=second)).to_have_count(1)
    expect(page.locator("#panel-questions")).not_to_contain_text(second)
    page.click("#tab-history")
    latest = page.locator("#history-list > li").first
    expect(latest).to_contain_text("Moved")
    expect(latest).to_contain_text(second)
