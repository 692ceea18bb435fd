"""How much can critiques teach the placement of the *other* new documents? An upper bound.

The service benchmark (``bench/service_eval.py``) asks, after 20 answered questions and 10
moves, how the misplacement of the new documents nobody critiqued changes. This bench plays
the same protocol in process, on the placement model alone (no server, no dendrogram), and
retrains it three ways:

- ``moves``: with the moved documents filed where the person put them (what a recluster
  learns from moves), every quantity cross-validated again;
- ``service``: the same, as the service's recluster after feedback does it: the first
  model's cross-validated quantities kept (``FolderPlacement(cross_validated=...)``) and
  each document left where it was shown unless another folder's posterior is
  ``--keep-margin`` higher (``extended_tree``'s ``keep_margin``, the service's default)
  and the model is no less sure of it than the first model was of the old one
  (``extended_tree``'s ``previous_confidence``) and at least ``--min-move-confidence``
  sure (the core's ``MIN_MOVE_CONFIDENCE``, .5, by default),
  and the moved documents weighing ``--move-weight`` in the retrained model (the service's
  ``move_weight``, 1 by default);
- ``oracle``: with the *true* folder of every critiqued document, moved and asked about
  alike: more than a person's answers say, and the most any channel that learns from the
  critiqued documents' labels can get;
- ``svm``: a tf-idf + LinearSVC retrained with the moved documents, the classifier baseline.

Each figure is the relative change of the misplacement of the documents not critiqued
(negative: fewer misplaced). Questions are chosen as the service chooses them
(``core.closer_questions``); the simulated person skips ties.

The service column's flips (documents not critiqued that the recluster shows in another
folder) are counted as well: ``flips_right`` (now right), ``flips_wrong`` (right before),
``flips_between_wrong`` (wrong before and after), and ``flips_to_moved`` (into a folder a
moved document went to).

    python bench/feedback_ceiling.py CORPUS [--settings 2 3] [--seeds 0 1 2] [--keep-margin M]
        [--move-weight W]
"""

from __future__ import annotations

import random
import statistics
import sys
import warnings

import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.svm import LinearSVC

from foldwise.bench._corpus import CorpusError, load_corpus
from foldwise.bench.service_protocol import closer_truth, split_arguments, split_for_service
from foldwise.core import (
    MIN_MOVE_CONFIDENCE,
    FolderPlacement,
    closer_questions,
    question_priority,
    text_features,
)
from foldwise.core.placement._kept import kept_folders
from foldwise.service.config import ReclusterSettings


def _svm_misplaced(texts, labels, train, test, truth) -> float:
    vectorizer = TfidfVectorizer(sublinear_tf=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = LinearSVC().fit(vectorizer.fit_transform([texts[i] for i in train]), labels)
    predicted = model.predict(vectorizer.transform([texts[i] for i in test]))
    return float(np.mean([p != "/".join(truth[i]) for p, i in zip(predicted, test, strict=True)]))


def _kept_misplaced(
    model, P, X, with_moves, moved, rest, truth, keep_margin, move_weight, min_move_confidence
) -> tuple[float, dict[str, int]]:
    """Misplacement of ``rest`` after the service's recluster with the ``moved`` documents
    filed (weighing ``move_weight``): ``model``'s cross-validated quantities kept, and a
    document kept in its most probable folder under ``model`` (posteriors ``P`` of the rows
    of ``X``) unless another folder's posterior is ``keep_margin`` higher and the model is
    no less sure of it than ``model`` was of the old one, and at least
    ``min_move_confidence`` sure; with the flips among ``rest`` counted (module docstring)."""
    sample_weight = np.ones(X.shape[0])
    sample_weight[list(moved)] = move_weight
    after = FolderPlacement(cross_validated=model.cross_validated_state()).fit(
        X, with_moves, sample_weight=sample_weight
    )
    assert after.folders_ == model.folders_  # the moves go to folders with filed documents
    folders = after.folders_
    previous = [folders[int(P[i].argmax())] for i in rest]
    # The confidence each was shown with (the first tree's), and the rule extended_tree
    # applies, on the rows of ``rest``.
    shown, _ = kept_folders(
        after.predict_proba(X[rest]),
        folders,
        np.arange(len(rest)),
        previous,
        keep_margin,
        model.calibrated_confidence(P[rest].max(axis=1)),
        after.calibrated_confidence,
        min_move_confidence,
    )
    destinations = {truth[i] for i in moved}
    flips = dict.fromkeys(
        ("flips_right", "flips_wrong", "flips_between_wrong", "flips_to_moved"), 0
    )
    for j, i, was in zip(shown, rest, previous, strict=True):
        if folders[j] == was:
            continue
        kind = (
            "right" if folders[j] == truth[i] else "wrong" if was == truth[i] else "between_wrong"
        )
        flips[f"flips_{kind}"] += 1
        flips["flips_to_moved"] += folders[j] in destinations
    misplaced = float(np.mean([folders[j] != truth[i] for j, i in zip(shown, rest, strict=True)]))
    return misplaced, flips


def run(
    corpus,
    setting: int,
    seed: int,
    questions: int,
    moves: int,
    keep_margin: float,
    move_weight: float,
    min_move_confidence: float,
) -> dict[str, float | int]:
    split = split_for_service(corpus, setting, seed)
    docs = list(split.filed) + list(split.new)
    n_filed = len(split.filed)
    texts = [corpus.texts[i] for i in docs]
    truth = [tuple(corpus.folders[i]) for i in docs]
    X, _ = text_features(
        texts,
        min_term_count=1,
        max_terms=100000,
        min_term_length=2,
        stop_words=None,
        keep_digits=True,
    )  # fmt: skip  (the placement features of the service)
    labels = [truth[i] if i < n_filed else None for i in range(len(docs))]
    new = list(range(n_filed, len(docs)))
    known = [i for i in new if not split.is_hidden(truth[i])]
    model = FolderPlacement().fit(X, labels)
    P = model.predict_proba(X)
    folders = model.folders_
    asked = closer_questions(P[new], folders, model.known_proba(X[new]))
    priority = {
        i: question_priority(q.value, q.answerable)
        for i, q in zip(new, asked, strict=True)
        if q is not None
    }
    order = sorted(priority, key=lambda i: (-priority[i], i))[:questions]
    answered = [
        i
        for i in order
        if closer_truth(truth[i], folders[asked[i - n_filed].b], folders[asked[i - n_filed].c])
        != "tie"
    ]
    misplaced = [i for i in known if folders[int(P[i].argmax())] != truth[i] and i not in answered]
    moved = random.Random(seed).sample(misplaced, min(moves, len(misplaced)))
    critiqued = set(moved) | set(answered)
    rest = [i for i in known if i not in critiqued]

    def misplacement(labels_after) -> float:
        after = FolderPlacement(previous_representation=model.representation_).fit(X, labels_after)
        Q = after.predict_proba(X[rest])
        return float(
            np.mean(
                [after.folders_[int(q.argmax())] != truth[i] for q, i in zip(Q, rest, strict=True)]
            )
        )

    before = float(np.mean([folders[int(P[i].argmax())] != truth[i] for i in rest]))
    with_moves = list(labels)
    for i in moved:
        with_moves[i] = truth[i]
    oracle = list(labels)
    for i in critiqued:
        oracle[i] = truth[i]
    filed_labels = ["/".join(truth[i]) for i in range(n_filed)]
    svm_before = _svm_misplaced(texts, filed_labels, range(n_filed), rest, truth)
    svm_after = _svm_misplaced(
        texts, filed_labels + ["/".join(truth[i]) for i in moved], [*range(n_filed), *moved], rest,
        truth,
    )  # fmt: skip

    def change(after: float, base: float) -> float:
        return (after - base) / base if base else 0.0

    service, flips = _kept_misplaced(
        model, P, X, with_moves, moved, rest, truth, keep_margin, move_weight, min_move_confidence
    )
    return {
        "misplaced_before": before,
        "moves": change(misplacement(with_moves), before),
        "service": change(service, before),
        "oracle": change(misplacement(oracle), before),
        "svm": change(svm_after, svm_before),
        "critiqued": len(critiqued),
        "rest": len(rest),
        **flips,
    }


def main(argv: list[str] | None = None) -> int:
    parser = split_arguments(__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=20)
    parser.add_argument("--moves", type=int, default=10)
    parser.add_argument(
        "--keep-margin",
        type=float,
        default=ReclusterSettings.model_fields["keep_margin"].default,
        help="the service column's keep_margin (default: the service's)",
    )
    parser.add_argument(
        "--move-weight",
        type=float,
        default=ReclusterSettings.model_fields["move_weight"].default,
        help="the moved documents' weight in the service column (default: the service's)",
    )
    parser.add_argument(
        "--min-move-confidence",
        type=float,
        default=MIN_MOVE_CONFIDENCE,
        help="the service column's confidence a document needs to move (default: the core's)",
    )
    args = parser.parse_args(argv)
    if not 0.0 <= args.min_move_confidence <= 1.0:
        parser.error(f"--min-move-confidence must lie in [0, 1], got {args.min_move_confidence}")
    if not 0.0 <= args.keep_margin <= 1.0:
        parser.error(f"--keep-margin must lie in [0, 1], got {args.keep_margin}")
    if not args.move_weight > 0.0:
        parser.error(f"--move-weight must be above 0, got {args.move_weight}")
    try:
        corpus = load_corpus(args.corpus)
    except CorpusError as exc:
        print(f"feedback_ceiling: {exc}", file=sys.stderr)
        return 2
    rows = []
    for setting in args.settings:
        for seed in args.seeds:
            row = run(
                corpus,
                setting,
                seed,
                args.questions,
                args.moves,
                args.keep_margin,
                args.move_weight,
                args.min_move_confidence,
            )
            rows.append(row)
            print(
                f"setting={setting} seed={seed} "
                + " ".join(
                    f"{k}={v:+.3f}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items()
                ),
                flush=True,
            )
    for key in ("moves", "service", "oracle", "svm"):
        values = [r[key] for r in rows]
        print(
            f"{key}: median {statistics.median(values):+.3f}, "
            f"range {min(values):+.3f} .. {max(values):+.3f}"
        )
    flips = {k: sum(int(r[k]) for r in rows) for k in rows[0] if k.startswith("flips_")}
    print(
        f"service flips: {flips['flips_right']} right, {flips['flips_wrong']} wrong, "
        f"{flips['flips_between_wrong']} between wrong folders; {flips['flips_to_moved']} "
        "into a folder a moved document went to"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
