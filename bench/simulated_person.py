"""The person the service benchmark (``service_eval.py``) simulates from the true
hierarchy, through the REST API only: answers "which is closer?" questions (a tie, where b
and c are equally related to a's true folder, is skipped with ``exclude``), moves
misplaced documents to their folder, and checks the next tree against what it said."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from foldwise.bench.served import Server
from foldwise.bench.service_protocol import closer_truth, violates
from foldwise.core import FolderPath
from served_tree import targets


@dataclass
class Answers:
    """What the simulated person did with the questions the service asked."""

    asked: int = 0
    ties: int = 0
    #: Answers the service refused (not 201).
    refused: int = 0
    #: Questions about a document the person has filed: never to be asked.
    filed_asked: int = 0
    #: (a, b's folder, c's folder) of each answer the service took: a is closer to b.
    answered: list[tuple[int, FolderPath, FolderPath]] = field(default_factory=list)
    #: Every question asked and how the person took it (for the JSON).
    log: list[dict[str, str]] = field(default_factory=list)
    #: The service asked again about a document ``exclude`` named.
    exclude_ignored: bool = False


def answer_questions(
    server: Server,
    n_questions: int,
    truth: Mapping[int, FolderPath],
    folder_path: Mapping[int, FolderPath],
    paths: Mapping[int, str],
) -> Answers:
    """Ask ``GET /api/questions/closer`` up to ``n_questions`` times and answer each from
    ``truth`` (new document id -> true folder) with a ``closer`` critique; ``paths``: new
    document id -> its corpus path, for the log."""
    answers = Answers()
    skipped: list[int] = []
    while answers.asked < n_questions:
        q = server.call("GET", "/api/questions/closer", params={"exclude": skipped})
        if q.status_code == 204:
            break
        q = q.json()
        a = q["a"]["id"]
        if a in skipped:
            answers.exclude_ignored = True
            break
        answers.asked += 1
        if a not in truth:
            answers.filed_asked += 1
            skipped.append(a)
            answers.log.append({"a": f"filed document {a}", "answer": "filed"})
            continue
        fb, fc = (folder_path[q[k]["folder_id"]] for k in ("b", "c"))
        answer = closer_truth(truth[a], fb, fc)
        answers.log.append(
            {
                "a": paths[a],
                "truth": "/".join(truth[a]),
                "b": "/".join(fb),
                "c": "/".join(fc),
                "answer": answer,
            }
        )
        if answer == "tie":
            answers.ties += 1
            skipped.append(a)
            continue
        b, c = (q["b"], q["c"]) if answer == "b" else (q["c"], q["b"])
        made = server.call(
            "POST", "/api/critiques", json={"kind": "closer", "a": a, "b": b["id"], "c": c["id"]}
        )
        if made.status_code != 201:
            answers.refused += 1
            skipped.append(a)
            answers.log[-1]["answer"] = "refused"
            continue
        answers.answered.append((a, folder_path[b["folder_id"]], folder_path[c["folder_id"]]))
    return answers


def move_documents(
    server: Server,
    docs: Sequence[int],
    truth: Mapping[int, FolderPath],
    folder_id: Mapping[FolderPath, int],
) -> None:
    """File each of ``docs`` in its true folder with a ``move`` critique (exits on a
    refused one)."""
    for d in docs:
        made = server.call(
            "POST",
            "/api/critiques",
            json={"kind": "move", "document_id": d, "folder_id": folder_id[truth[d]]},
        )
        if made.status_code != 201:
            raise SystemExit(f"move of {d} refused: {made.status_code} {made.text[:200]}")


def critiques_violated(
    server: Server,
    tree: dict[str, Any],
    moved: Sequence[int],
    answers: Answers,
    truth: Mapping[int, FolderPath],
    folder_id: Mapping[FolderPath, int],
    folder_path: Mapping[int, FolderPath],
) -> int:
    """How many critiques ``tree`` (the next extended tree) breaks: a moved document not in
    the folder the person put it in, or an answered one in c's branch (001 sec. 3)."""
    violations = 0
    for d in moved:
        doc = server.call("GET", f"/api/documents/{d}").json()
        violations += doc["folder_id"] != folder_id[truth[d]]
    shown_in = targets(tree)
    for a, fb, fc in answers.answered:
        target = shown_in.get(a)
        placed = folder_path.get(target) if isinstance(target, int) else None
        if placed is not None and violates(placed, fb, fc):
            violations += 1
    return violations
