"""What a served extended tree (``GET /api/tree/extended``, as JSON) shows of the new
documents: where each is, which are in proposals, and how two trees differ. Read by the
service benchmark (``service_eval.py``) and its replays (``replay_first_recluster.py``)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from foldwise.bench._corpus import Corpus
from foldwise.core import FolderPath


def targets(tree: dict[str, Any]) -> dict[int, int | str | None]:
    """Document id -> the folder id, proposal key or None (top level) it is shown in."""
    return {p["document_id"]: p["folder_id"] for p in tree["placements"]}


def places(
    tree: dict[str, Any], folder_path: dict[int, FolderPath]
) -> dict[int, tuple[str | None, float | None]]:
    """Document id -> where ``tree`` shows it (a folder path, ``proposal:<name>`` or None)
    and the confidence it shows it with."""
    names = {f["id"]: f["name"] for f in tree["folders"] if f["kind"] == "proposed"}
    out: dict[int, tuple[str | None, float | None]] = {}
    for p in tree["placements"]:
        target = p["folder_id"]
        label = (
            f"proposal:{names.get(target)}"
            if isinstance(target, str)
            else "/".join(folder_path[target])
            if isinstance(target, int) and target in folder_path
            else None
        )
        out[p["document_id"]] = (label, p.get("confidence"))
    return out


def shown_sure(tree: dict[str, Any]) -> set[int]:
    """Documents ``tree`` shows in an existing folder at confidence .9 or more."""
    return {
        p["document_id"]
        for p in tree["placements"]
        if isinstance(p["folder_id"], int) and p["confidence"] >= 0.9
    }


def changed_by_feedback(
    before: dict[str, Any],
    after: dict[str, Any],
    docs: list[int],
    truth: dict[int, FolderPath],
    folder_path: dict[int, FolderPath],
) -> list[tuple[int, dict[str, Any]]]:
    """Each of ``docs`` whose place differs after feedback, with its true folder and where it
    was and is (:func:`places`) with the confidence shown."""
    was, now = places(before, folder_path), places(after, folder_path)
    changes = []
    for d in docs:
        place, confidence = was.get(d, (None, None))
        place_after, confidence_after = now.get(d, (None, None))
        if place != place_after:
            change = {
                "truth": "/".join(truth[d]),
                "before": place,
                "before_confidence": confidence,
                "after": place_after,
                "after_confidence": confidence_after,
            }
            changes.append((d, change))
    return changes


def instant_moves(
    before: dict[str, Any],
    instant: dict[str, Any],
    after: dict[str, Any],
    docs: list[int],
    right: Callable[[dict[str, Any], int], bool],
) -> dict[str, Any]:
    """Of ``docs``, those ``instant`` shows elsewhere than ``before``: how many, how many
    right there and wrong before, the other way round, and how many ``after`` puts back."""
    b, i, a = targets(before), targets(instant), targets(after)
    moved = [d for d in docs if i.get(d) != b.get(d)]
    shown = {p["document_id"]: p["confidence"] for p in instant["placements"]}
    return {
        # JSON only: each as (right before, right then, put back, confidence then).
        "instant_moves": [
            (right(before, d), right(instant, d), a.get(d) == b.get(d), shown.get(d)) for d in moved
        ],
        "instant_moved": len(moved),
        "instant_moved_to_right": sum(right(instant, d) and not right(before, d) for d in moved),
        "instant_moved_to_wrong": sum(right(before, d) and not right(instant, d) for d in moved),
        "instant_put_back": sum(a.get(d) == b.get(d) for d in moved),
    }


def proposal_members(tree: dict[str, Any]) -> list[set[int]]:
    """Member sets of every proposal, each with its nested proposals' documents."""
    proposed = {f["id"]: f for f in tree["folders"] if f["kind"] == "proposed"}
    members = {k: set(f.get("document_ids") or []) for k, f in proposed.items()}
    for key, folder in proposed.items():
        parent = folder["parent_id"]
        while isinstance(parent, str) and parent in proposed:
            members[parent] |= members[key]
            parent = proposed[parent]["parent_id"]
    return list(members.values())


def in_proposals(
    tree: dict[str, Any], docs: list[int], corpus: Corpus, text_of: dict[int, int]
) -> list[str]:
    """``"corpus path -> proposal name"`` of each of ``docs`` the tree puts in a proposal."""
    names = {f["id"]: f["name"] for f in tree["folders"] if f["kind"] == "proposed"}
    shown_in = targets(tree)
    return sorted(
        f"{corpus.paths[text_of[d]]} -> {names[shown_in[d]]}"
        for d in docs
        if isinstance(shown_in.get(d), str)
    )


def hidden_placed(
    tree: dict[str, Any], hidden: list[int], folder_path: dict[int, FolderPath]
) -> dict[str, Any]:
    """Where the tree puts the documents of the hidden folders: how many in a proposal, in an
    existing folder and at the top level, and for those in existing folders the folder and
    the shown confidence (what the open-set test let through)."""
    shown = {p["document_id"]: p for p in tree["placements"]}
    existing = [
        ("/".join(folder_path[shown[d]["folder_id"]]), round(shown[d]["confidence"], 3))
        for d in hidden
        if d in shown and isinstance(shown[d]["folder_id"], int)
    ]
    n_in_proposals = sum(1 for d in hidden if d in shown and isinstance(shown[d]["folder_id"], str))
    return {
        "proposal": n_in_proposals,
        "existing": len(existing),
        "top": len(hidden) - n_in_proposals - len(existing),
        "existing_folders": sorted(existing),
    }


def proposal_makeup(
    tree: dict[str, Any], truth: dict[int, FolderPath], folder_path: dict[int, FolderPath]
) -> list[dict[str, Any]]:
    """Each proposal's name, parent (an existing folder's path or another proposal's name),
    and how many of its own documents come from each true folder: which hidden folders a
    proposal found, and which it cut or mixed."""
    proposed = {f["id"]: f for f in tree["folders"] if f["kind"] == "proposed"}
    out = []
    for folder in proposed.values():
        parent = folder["parent_id"]
        where = (
            proposed[parent]["name"]
            if isinstance(parent, str) and parent in proposed
            else "/".join(folder_path.get(parent, ()))
        )
        members = Counter("/".join(truth[d]) for d in folder.get("document_ids") or [])
        out.append({"name": folder["name"], "parent": where, "members": dict(members)})
    return out
