"""``GET /api/questions/closer``: ask where an answer changes the most.

The core decides, per placed document, which question is worth asking (``closer_questions``,
docs/placement.md "Questions"): b in the folder the document is shown in, c in the folder of
another branch that gives the question the highest priority, with the expected number of
placements the answer changes (``question_value``) and the probability that the person has
an answer at all (``question_answerable``: a document likely of a new topic, or likely in a
third branch, makes the question a tie). Questions are asked in the core's order
(``question_priority``: the value less a quarter per expected tie). Skipped are documents
already asked about (a ``closer`` critique in force with the document as ``a``), documents
the person filed, and the ``exclude`` ids (questions the person skipped). A question
between the same two folders as one the person skipped, or with the folder its document was
shown in as b or c, comes after every other (:func:`_order`). ``b`` and ``c`` are the
members of the two folders nearest to each folder's centroid, so the person compares the
document with what each folder is typically about. "Neither: it belongs elsewhere" is a
move critique of ``a``.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import select
from sqlalchemy.orm import Session

from foldwise import core
from foldwise.service.critiques.models import Critique
from foldwise.service.critiques.schemas import CloserQuestion, DocumentRef
from foldwise.service.documents.models import Document
from foldwise.service.folders.service import folder_paths
from foldwise.service.recluster.recluster_input import representatives
from foldwise.service.recluster.tree.models import TreePlacement
from foldwise.service.recluster.tree.versions import latest_version
from foldwise.service.users.models import User

#: Candidates tried, in order, before giving up.
MAX_TRIES = 10


def _order(rows: Sequence[TreePlacement], skipped: set[int]) -> list[TreePlacement]:
    """Candidate questions in the order they are asked: by the core's
    ``question_priority``; after all of them, the questions the person's skips
    (``skipped``: their document ids) make likely ties.

    - **The same two folders**, either way round (a case of the next rule). A skip says
      the person could not choose between them for that document, and the next document
      held between them is most often the same case: on 20 Newsgroups
      (``bench/service_eval.py``, setting 3, six runs) 11 of 19 ties came after a tie
      between the same two folders, 10 of them posts of the hidden ``talk/religion-misc``
      between ``soc/religion-christian`` and ``alt/atheism``.
    - **The folder the skipped document was shown in, as b or c.** A tie means the
      document belongs in neither b's branch nor c's (001 sec. 3), so the folder it is
      shown in (b) holds documents from elsewhere, most often of a topic the person has no
      folder for yet. That topic's other documents have the folder among their two most
      probable, shown in it or beside it, and their questions are the next ties whatever
      the other folder is. On the SymPy documentation 21 of 41 ties were pages of the
      hidden ``tutorials/physics/mechanics`` shown in
      ``explanation/modules/physics/mechanics``, each asked against another c.

    docs/placement.md, "Questions"."""

    def pair(pl: TreePlacement) -> frozenset[int | None]:
        return frozenset((pl.best_folder_id, pl.question_folder_id))

    skipped_shown = {pl.best_folder_id for pl in rows if pl.document_id in skipped}
    return sorted(
        rows,
        key=lambda pl: (
            bool(pair(pl) & skipped_shown),
            -core.question_priority(pl.question_value or 0.0, pl.question_answerable or 0.0),
            pl.document_id,
        ),
    )


def closer_question(
    *, session: Session, user: User, exclude: set[int] | None = None
) -> CloserQuestion | None:
    """The next question, or ``None`` when there is nothing to ask."""
    version = latest_version(session=session, user_id=user.id)
    if version is None:
        return None
    asked = set(
        session.scalars(
            select(Critique.a).where(
                Critique.user_id == user.id,
                Critique.kind == "closer",
                Critique.undone_at.is_(None),
            )
        )
    )
    unfiled = set(
        session.scalars(
            select(Document.id).where(Document.user_id == user.id, Document.folder_id.is_(None))
        )
    )
    # By path: a leaf name alone is ambiguous ("functions" is a folder of many extensions
    # of the PHP manual).
    live_folders = folder_paths(session=session, user=user)
    asked |= exclude or set()
    rows = session.scalars(
        select(TreePlacement).where(
            TreePlacement.version_id == version.id,
            TreePlacement.best_folder_id.is_not(None),
            TreePlacement.question_folder_id.is_not(None),
        )
    ).all()
    rows = _order(rows, skipped=exclude or set())
    tries = 0
    for pl in rows:
        if pl.document_id not in unfiled or pl.document_id in asked:
            continue
        best, runner = pl.best_folder_id, pl.question_folder_id
        if best not in live_folders or runner not in live_folders:
            continue
        tries += 1
        if tries > MAX_TRIES:
            break
        reps = representatives(session=session, user_id=user.id, folder_ids=[best, runner])
        if best not in reps or runner not in reps:
            continue
        docs = {
            d.id: d
            for d in session.scalars(
                select(Document).where(Document.id.in_([pl.document_id, reps[best], reps[runner]]))
            )
        }

        a, b, c = (docs[pl.document_id], docs[reps[best]], docs[reps[runner]])
        return CloserQuestion(
            a=DocumentRef(id=a.id, title=a.title, folder_id=a.folder_id),
            b=DocumentRef(id=b.id, title=b.title, folder_id=b.folder_id),
            c=DocumentRef(id=c.id, title=c.title, folder_id=c.folder_id),
            tree_version=version.number,
            reason=(
                f"document {pl.document_id} may belong in folder {live_folders[best]!r} or "
                f"in {live_folders[runner]!r} (an answer moves it with probability "
                f"{pl.question_value or 0.0:.2f}); b and c are their most typical documents"
            ),
        )
    return None
