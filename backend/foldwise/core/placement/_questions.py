"""Which "is a closer to b or to c?" question to ask about a new document, and in which
order (docs/placement.md, "Questions").

A person answers from their hierarchy: a is closer to b when a's folder shares a deeper
common ancestor with b's folder than with c's (001 sec. 3). Let N be the deepest common
ancestor of b's and c's folders and B, C the subtrees of N's children that hold them. The
answer is "b" when a belongs in B, "c" when it belongs in C, and a tie (nothing to answer)
anywhere else. Under the placement model's posterior p, with ``known`` the probability that
a belongs to an existing folder at all (a document of a new topic makes every question a
tie):

- the question is answerable with probability ``(p(B) + p(C)) * known``;
- with b in a's most probable folder, the answer moves a out of the folder it is shown in
  with probability about ``min(p(B), p(C)) * known``: that is the expected number of
  placements the answer changes, the question's value.

The question worth asking is the one of highest :func:`question_priority`: the value, less
a quarter of a change per expected tie. c is chosen among a's most probable folders so that
it is highest; it never lies above or below b's folder (then a document in b's folder
itself would be a tie), so b and c sit in different branches. Questions about different
documents are asked in the same order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from foldwise.core._hierarchy import FolderPath
from foldwise.core.placement._levels import common_depths

#: Candidates for c: the most probable folders after a's best one.
_CANDIDATES = 12
#: What an expected tie costs in :func:`question_priority`, in placements changed: the tie
#: share the person is asked to bear is one question in five, a quarter of the answered
#: ones. Chosen on four hierarchies and checked on two held out (docs/placement.md,
#: "Questions", "Ties priced in").
TIE_COST = 0.25


@dataclass(frozen=True)
class CloserQuestion:
    """The question to ask about one document.

    Attributes
    ----------
    b, c : int
        Columns (folders) of the posterior: b is the document's most probable folder.
    value : float
        Expected number of placements the answer changes (``min(p(B), p(C)) * known``).
    answerable : float
        Probability that the person has an answer (``(p(B) + p(C)) * known``).
    """

    b: int
    c: int
    value: float
    answerable: float


def closer_questions(
    proba: NDArray[np.float64],
    folders: Sequence[FolderPath],
    known: NDArray[np.float64] | None = None,
    shown: NDArray[np.intp] | None = None,
) -> list[CloserQuestion | None]:
    """The best question about each row of ``proba``; ``None`` where none can be asked.

    Parameters
    ----------
    proba : ndarray of shape (n_docs, n_folders)
        Folder posteriors (rows sum to 1).
    folders : sequence of FolderPath, length n_folders
        The folders of the columns.
    known : ndarray of shape (n_docs,), optional
        Probability that each document belongs to an existing folder (1 if omitted).
    shown : ndarray of shape (n_docs,), int, optional
        Column of the folder each document is shown in, which b's folder is (by default its
        most probable folder).

    Returns
    -------
    list of CloserQuestion or None, length n_docs
    """
    proba = np.asarray(proba, dtype=np.float64)
    n_docs, k = proba.shape
    if k != len(folders):
        raise ValueError(f"proba has {k} columns for {len(folders)} folders")
    known = np.ones(n_docs) if known is None else np.asarray(known, dtype=np.float64)
    depth = common_depths(folders)
    lengths = np.array([len(f) for f in folders])
    out: list[CloserQuestion | None] = []
    for i in range(n_docs):
        p = proba[i]
        order = np.argsort(-p, kind="stable")
        b = int(order[0]) if shown is None else int(shown[i])
        best: CloserQuestion | None = None
        best_priority = -np.inf
        for c in map(int, order[order != b][:_CANDIDATES]):
            d = depth[b, c]
            if d == lengths[b] or d == lengths[c]:
                continue  # one folder holds the other: a document in the outer one is a tie
            mass_b = float(p[depth[:, b] > d].sum())
            mass_c = float(p[depth[:, c] > d].sum())
            # An answer moves a only if a belongs to an existing folder: for a document
            # of a new topic both are wrong and the person has no answer.
            value = min(mass_b, mass_c) * float(known[i])
            answerable = (mass_b + mass_c) * float(known[i])
            priority = question_priority(value, answerable)
            if best is None or priority > best_priority:
                best, best_priority = CloserQuestion(b, c, value, answerable), priority
        out.append(best)
    return out


def question_priority(value: float, answerable: float) -> float:
    """Which question to ask first: the higher, the sooner.

    The expected number of placements the answer changes, less ``TIE_COST`` per expected
    tie (``1 - answerable``). A tie changes nothing and costs the person a question, and
    the most valuable questions are often about documents of topics the person has no
    folder for, whose questions are ties. On the service splits of six hierarchies (36
    runs, the first 20 questions of each, replayed): by value alone 141 ties; the likely
    answerable ones first (``answerable >= .8``), then by value, 61 ties, but only 62
    answers of "c", the answers that move a document (a likely answer is most often "where
    it is shown"); by this priority 36 ties and 97 answers of "c" (docs/placement.md,
    "Questions", "Ties priced in").

    Parameters
    ----------
    value : float
        ``CloserQuestion.value``, in [0, 1].
    answerable : float
        ``CloserQuestion.answerable``, in [0, 1].
    """
    return value - TIE_COST * (1.0 - answerable)
