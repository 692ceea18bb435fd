"""Service-level benchmark: the product as a person lives with it, through the REST API only.

Per run (setting, seed), on a fresh data directory and a real ``foldwise serve``:

1. split the corpus (``foldwise.bench.service_protocol``): hide a leaf folder (setting 2) or a
   subtree (setting 3), hold back 40% of every other folder as new;
2. import the filed part as one zip, post the new documents one by one (shuffled), recluster,
   read ``/api/tree/extended`` ("before");
3. a person simulated from the truth answers ``--questions`` "which is closer?" questions
   (skipping ties with ``exclude``) and moves ``--moves`` misplaced documents to their folder;
   recluster, read the tree ("after"); recluster again with no change ("control").

Reported per run, and as medians per setting: served exact placement (``folder_id``) beside
a tf-idf + LinearSVC trained on the same filed documents, and that SVM retrained with the
moved documents; misplacement of the documents not corrected, before and after feedback;
known documents put in proposals; calibration of confidences >= .9 (over the known
documents, and over all new ones: ``calibration_all``); tie share of questions, the answers
that move their document ("c") and the answered documents right before and after feedback
(``answered_right``: what the answers fixed); best-match F of the hidden folders against
proposals, before feedback and after it (``proposal_f_after``, with the hidden documents
posted late); churn of the control recluster; critiques violated by the "after" tree;
timings. Usage::

    python bench/service_eval.py CORPUS --settings 2 3 --seeds 0 1 2 --json out.json

The automatic recluster is off (``FOLDWISE_RECLUSTER_AUTO=false``): only the benchmark's
reclusters run, so every figure belongs to a known tree.

``--late SHARE`` posts that share of the new documents (the last of the shuffled order)
after the first recluster and the questions, before the moves: what a person sees of a
document that arrives while a tree is served. ``late_*`` figures, over those of existing
folders: right at ingest (the fitted model), after the moves (the re-placement after a
critique), after the next recluster, and the SVM's on the same documents.
"""

from __future__ import annotations

import argparse
import io
import json
import random
import statistics
import sys
import tempfile
import time
import warnings
import zipfile
from pathlib import Path
from typing import Any

from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.svm import LinearSVC

from foldwise.bench._corpus import Corpus, CorpusError
from foldwise.bench.served import Server, check_server_source
from foldwise.bench.service_protocol import (
    ServiceSplit,
    best_match_f,
    churn,
    load_for_service,
    paired_p,
    result_line,
    share,
    split_arguments,
    split_for_service,
)
from foldwise.core import FolderPath
from served_tree import (
    changed_by_feedback,
    hidden_placed,
    in_proposals,
    instant_moves,
    places,
    proposal_makeup,
    proposal_members,
    shown_sure,
    targets,
)
from simulated_person import answer_questions, critiques_violated, move_documents


def _zip(corpus: Corpus, indices: list[int]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
        for i in indices:
            z.writestr(corpus.paths[i], corpus.texts[i])
    return buffer.getvalue()


def _svm_predict(texts: list[str], labels: list[str], queries: list[str]) -> list[str]:
    vectorizer = TfidfVectorizer(sublinear_tf=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = LinearSVC().fit(vectorizer.fit_transform(texts), labels)
    return list(model.predict(vectorizer.transform(queries)))


def import_filed(server: Server, corpus: Corpus, split: ServiceSplit) -> None:
    """Import the split's filed documents as one zip (exits on a refused import)."""
    zipped = _zip(corpus, split.filed)
    report = server.call(
        "POST", "/api/import/zip", files={"file": ("filed.zip", zipped, "application/zip")}
    )
    if report.status_code != 200 and report.status_code != 201:
        raise SystemExit(f"zip import failed: {report.status_code} {report.text[:300]}")


def post_new(
    server: Server, corpus: Corpus, split: ServiceSplit, rng: random.Random
) -> dict[int, int]:
    """Post the split's new documents one by one in an order shuffled by ``rng``; new
    document id -> corpus index, in posting order."""
    return post_texts(server, corpus, posting_order(split, rng))


def posting_order(split: ServiceSplit, rng: random.Random) -> list[int]:
    """The split's new documents (corpus indices) in the order they are posted."""
    order = list(split.new)
    rng.shuffle(order)
    return order


def post_texts(server: Server, corpus: Corpus, indices: list[int]) -> dict[int, int]:
    """Post the documents ``indices`` one by one; new document id -> corpus index, leaving
    out texts the service already has (``duplicate``)."""
    text_of: dict[int, int] = {}
    for i in indices:
        body = {"title": Path(corpus.paths[i]).name, "text": corpus.texts[i]}
        posted = server.call("POST", "/api/documents", json=body).json()
        if not posted["duplicate"]:
            text_of[posted["document"]["id"]] = i
    return text_of


def _late_figures(
    corpus: Corpus,
    split: ServiceSplit,
    late_of: dict[int, int],
    trees: tuple[dict[str, Any], dict[str, Any], dict[str, Any]],
    folder_id: dict[FolderPath, int],
    moved: list[int],
    text_of: dict[int, int],
) -> dict[str, Any]:
    """Figures of the documents posted after the first recluster (``--late``, ids ->
    corpus indices in ``late_of``), over those of existing folders: right at ingest, after
    the moves (the re-placement after the critiques), after the next recluster, and the
    SVM's on the same documents (trained on the filed ones, and with the moved ones);
    calibration at >= .9 at ingest and after the moves; what the re-placement changed."""
    ingest, instant, after = trees
    known = [d for d, i in late_of.items() if not split.is_hidden(tuple(corpus.folders[i]))]
    want = {d: folder_id.get(tuple(corpus.folders[late_of[d]])) for d in known}
    shown_in = {id(tree): targets(tree) for tree in trees}

    def right(tree: dict[str, Any], d: int) -> bool:
        return shown_in[id(tree)].get(d) == want[d]

    def sure(tree: dict[str, Any]) -> list[bool]:
        shown = shown_sure(tree)
        return [right(tree, d) for d in known if d in shown]

    filed = list(split.filed)
    queries = [corpus.texts[late_of[d]] for d in known]
    truths = ["/".join(corpus.folders[late_of[d]]) for d in known]
    labels = ["/".join(corpus.folders[i]) for i in filed]
    svm = _svm_predict([corpus.texts[i] for i in filed], labels, queries)
    retrained = _svm_predict(
        [corpus.texts[i] for i in filed] + [corpus.texts[text_of[d]] for d in moved],
        labels + ["/".join(corpus.folders[text_of[d]]) for d in moved],
        queries,
    )
    updated = instant_moves(ingest, instant, after, known, right)
    folder_path = {i: path for path, i in folder_id.items()}
    at_ingest, at_after = places(ingest, folder_path), places(after, folder_path)

    return {
        # JSON only: each late document of an existing folder, where ingest and the next
        # recluster show it and with which confidence.
        "late_placed": [
            {
                "path": corpus.paths[late_of[d]],
                "truth": "/".join(corpus.folders[late_of[d]]),
                "ingest": at_ingest.get(d, (None, None)),
                "after": at_after.get(d, (None, None)),
            }
            for d in known
        ],
        "late_new": len(late_of),
        "late_known": len(known),
        "late_ingest_exact": share([right(ingest, d) for d in known]),
        "late_instant_exact": share([right(instant, d) for d in known]),
        "late_after_exact": share([right(after, d) for d in known]),
        "late_svm_exact": share([p == t for p, t in zip(svm, truths, strict=True)]),
        "late_svm_retrained_exact": share([p == t for p, t in zip(retrained, truths, strict=True)]),
        "late_ingest_calibration_n": len(sure(ingest)),
        "late_ingest_calibration": share(sure(ingest)),
        "late_instant_calibration_n": len(sure(instant)),
        "late_instant_calibration": share(sure(instant)),
        **{f"late_{k}": v for k, v in updated.items()},
    }


def run(corpus: Corpus, setting: int, seed: int, args: argparse.Namespace) -> dict[str, Any]:
    split: ServiceSplit = split_for_service(corpus, setting, seed)
    rng = random.Random(seed)
    out: dict[str, Any] = {"setting": setting, "seed": seed, "hidden": "/".join(split.hidden)}
    timings: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="service-eval-") as tmp:
        env = {"FOLDWISE_RECLUSTER_METHOD": args.method}
        if args.r_max is not None:
            env["FOLDWISE_RECLUSTER_R_MAX"] = str(args.r_max)
        # Only the benchmark's reclusters run, so every figure belongs to a known tree.
        env["FOLDWISE_RECLUSTER_AUTO"] = "false"
        env.update(args.env)
        server = Server(Path(tmp), env=env, source=args.server_src)
        try:
            t0 = time.perf_counter()
            import_filed(server, corpus, split)
            timings["import"] = time.perf_counter() - t0
            folders = server.call("GET", "/api/folders").json()
            folder_path = {f["id"]: tuple(f["path"].split("/")) for f in folders}
            folder_id = {p: i for i, p in folder_path.items()}
            t0 = time.perf_counter()
            order = posting_order(split, rng)
            n_late = round(args.late * len(order))
            # new document id -> corpus index
            text_of = post_texts(server, corpus, order[: len(order) - n_late])
            timings["post_new"] = time.perf_counter() - t0
            # new document id -> its true folder
            truth: dict[int, FolderPath] = {d: tuple(corpus.folders[i]) for d, i in text_of.items()}
            known = [d for d, f in truth.items() if not split.is_hidden(f)]
            before, timings["recluster_1"] = server.recluster()

            def right(tree: dict[str, Any], d: int) -> bool:
                return targets(tree).get(d) == folder_id.get(truth[d])

            # The simulated person: questions first, then moves.
            paths = {d: corpus.paths[i] for d, i in text_of.items()}
            answers = answer_questions(server, args.questions, truth, folder_path, paths)
            if answers.exclude_ignored:
                out["exclude_ignored"] = True
            answered_ids = {a for a, _, _ in answers.answered}
            # Posted after the recluster (``--late``): shown at ingest by the fitted model,
            # then after the moves' re-placement, then by the next recluster.
            late_of = post_texts(server, corpus, order[len(order) - n_late :])
            ingest = server.call("GET", "/api/tree/extended").json() if late_of else None
            misplaced = sorted(d for d in known if not right(before, d) and d not in answered_ids)
            moved = rng.sample(misplaced, min(args.moves, len(misplaced)))
            move_documents(server, moved, truth, folder_id)
            # What the person sees between the critiques and the next recluster: the
            # re-placement after each critique (``instant.replace_after_critique``).
            instant = server.call("GET", "/api/tree/extended").json()
            after, timings["recluster_2"] = server.recluster()
            control, timings["recluster_control"] = server.recluster()

            violations = critiques_violated(
                server, after, moved, answers, truth, folder_id, folder_path
            )
            # The placement representation of the three reclusters, in order (JSON only):
            # which of the selection's candidates served each tree.
            versions = server.call("GET", "/api/tree/versions").json()[:3]
            out["representations"] = [
                (v.get("stats") or {}).get("placement_representation") for v in versions[::-1]
            ]
        finally:
            server.stop()

    # Figures.
    rest = [d for d in known if d not in set(moved) and d not in answered_ids]
    answered_known = [d for d in known if d in answered_ids]
    filed_texts = [corpus.texts[i] for i in split.filed]
    filed_labels = ["/".join(corpus.folders[i]) for i in split.filed]
    svm = dict(
        zip(
            known,
            _svm_predict(filed_texts, filed_labels, [corpus.texts[text_of[d]] for d in known]),
            strict=True,
        )
    )
    retrained = dict(
        zip(
            rest,
            _svm_predict(
                filed_texts + [corpus.texts[text_of[d]] for d in moved],
                filed_labels + ["/".join(truth[d]) for d in moved],
                [corpus.texts[text_of[d]] for d in rest],
            ),
            strict=True,
        )
    )

    def svm_right(pred: dict[int, str], d: int) -> bool:
        return pred[d] == "/".join(truth[d])

    if ingest is not None:  # read only when late documents were posted
        out.update(
            _late_figures(
                corpus, split, late_of, (ingest, instant, after), folder_id, moved, text_of
            )
        )

    # Documents shown in an existing folder at confidence >= .9: right or not.
    sure_before = shown_sure(before)
    confident = [right(before, d) for d in known if d in sure_before]
    # The same over every new document: a person cannot tell a page of a folder they do
    # not have yet from the others, and it is never right in an existing folder.
    confident_all = [right(before, d) for d in truth if d in sure_before]
    index_of = text_of | late_of  # every new document id -> corpus index
    truth_all = {d: tuple(corpus.folders[i]) for d, i in index_of.items()}

    def by_hidden_folder(docs: dict[int, FolderPath]) -> dict[FolderPath, set[int]]:
        out: dict[FolderPath, set[int]] = {}
        for d, f in docs.items():
            if split.is_hidden(f):
                out.setdefault(f, set()).add(d)
        return out

    hidden_sets = by_hidden_folder(truth)
    hidden_after = by_hidden_folder(truth_all)  # with the hidden documents posted late
    groups = proposal_members(before)
    mis_before = 1 - (share([right(before, d) for d in rest]) or 0.0)
    mis_after = 1 - (share([right(after, d) for d in rest]) or 0.0)
    svm_mis_before = 1 - (share([svm_right(svm, d) for d in rest]) or 0.0)
    svm_mis_after = 1 - (share([svm_right(retrained, d) for d in rest]) or 0.0)

    def relative(new: float, old: float) -> float | None:
        return (new - old) / old if old else None

    served_only = sum(right(before, d) and not svm_right(svm, d) for d in known)
    svm_only = sum(svm_right(svm, d) and not right(before, d) for d in known)
    known_in = in_proposals(before, known, corpus, text_of)
    known_in_after = in_proposals(after, rest, corpus, text_of)
    proposals_before = {f["id"]: f["name"] for f in after["folders"] if f["kind"] == "proposed"}
    proposals_control = {f["id"]: f["name"] for f in control["folders"] if f["kind"] == "proposed"}
    out.update(
        {
            "filed": len(split.filed),
            "new": len(truth),
            "known_new": len(known),
            "hidden_new": sum(len(h) for h in hidden_sets.values()),
            "served_exact": share([right(before, d) for d in known]),
            "served_exact_after": share([right(after, d) for d in rest]),
            "svm_exact": share([svm_right(svm, d) for d in known]),
            # The known documents one of the two places right and the other wrong, and
            # whether the difference is more than chance (exact McNemar test).
            "served_only_right": served_only,
            "svm_only_right": svm_only,
            "served_vs_svm_p": paired_p(served_only, svm_only),
            "svm_retrained_exact": share([svm_right(retrained, d) for d in rest]),
            "misplaced_before": mis_before,
            "misplaced_after": mis_after,
            "misplaced_change": relative(mis_after, mis_before),
            # JSON only: the documents nobody critiqued whose place feedback changed.
            "changed_by_feedback": [
                {"path": corpus.paths[text_of[d]], **change}
                for d, change in changed_by_feedback(before, after, rest, truth, folder_path)
            ],
            # The documents nobody critiqued that the re-placement after the critiques
            # moved, how many of those it moved right, and how many the next recluster
            # put back where they were: a flip and a flip back the person sees.
            **instant_moves(before, instant, after, rest, right),
            # JSON only: what the simulated person moved, to read the changes above by.
            "moved_paths": sorted(
                f"{corpus.paths[text_of[d]]} -> {'/'.join(truth[d])}" for d in moved
            ),
            "svm_misplaced_before": svm_mis_before,
            "svm_misplaced_after": svm_mis_after,
            "svm_misplaced_change": relative(svm_mis_after, svm_mis_before),
            "known_in_proposals": len(known_in),
            # Which ones, and the proposal each is in (JSON only): what a change should fix.
            "known_in_proposals_paths": known_in,
            # After feedback, among the documents not corrected: a rise in misplacement
            # that comes from new false proposals shows here.
            "known_in_proposals_after": len(known_in_after),
            "known_in_proposals_after_paths": known_in_after,
            "calibration_n": len(confident),
            "calibration": share(confident),
            "calibration_all_n": len(confident_all),
            "calibration_all": share(confident_all),
            "questions_asked": answers.asked,
            "questions_answered": len(answers.answered),
            "questions_refused": answers.refused,
            "tie_share": answers.ties / answers.asked if answers.asked else None,
            # An answer of "c" moves its document out of the folder it was shown in (b).
            "answers_c": sum(q["answer"] == "c" for q in answers.log),
            # Of the answered documents of existing folders.
            "answered_right_before": sum(right(before, a) for a in answered_known),
            "answered_right_after": sum(right(after, a) for a in answered_known),
            "filed_asked": answers.filed_asked,
            "question_log": answers.log,
            "moves": len(moved),
            "proposals": len(groups),
            # Before feedback (JSON only): why a hidden folder got no proposal.
            "hidden_placed": hidden_placed(
                before, [d for d, f in truth.items() if split.is_hidden(f)], folder_path
            ),
            # Before feedback (JSON only): what each proposal holds.
            "proposal_makeup": proposal_makeup(before, truth, folder_path),
            "proposal_f": best_match_f(hidden_sets, groups),
            "proposal_f_subtree": best_match_f(
                {split.hidden: set().union(*hidden_sets.values())}, groups
            )
            if hidden_sets
            else 0.0,
            # After feedback, over the hidden documents posted before and after the first
            # recluster: what the critiques and the late documents did to the proposals.
            "proposal_f_after": best_match_f(hidden_after, proposal_members(after))
            if hidden_after
            else 0.0,
            "churn": churn(targets(after), targets(control)),
            # JSON only: the documents the control recluster moved, where they were and are.
            "churned": [
                {"path": corpus.paths[index_of[d]], **change}
                for d, change in changed_by_feedback(
                    after, control, sorted(targets(after)), truth_all, folder_path
                )
            ],
            "proposal_ids_kept": sorted(proposals_before) == sorted(proposals_control),
            "proposal_names_kept": proposals_before == proposals_control,
            "critique_violations": violations,
            "timings_s": {k: round(v, 2) for k, v in timings.items()},
        }
    )
    return out


SUMMARY = [
    "served_exact",
    "svm_exact",
    "served_vs_svm_p",
    "known_in_proposals",
    "calibration",
    "calibration_all",
    "misplaced_before",
    "misplaced_after",
    "misplaced_change",
    "svm_misplaced_change",
    "tie_share",
    "proposal_f",
    "proposal_f_subtree",
    "proposal_f_after",
    "churn",
    "critique_violations",
]


#: Printed per run under ``--late``.
LATE_SUMMARY = [
    "late_known",
    "late_ingest_exact",
    "late_instant_exact",
    "late_after_exact",
    "late_svm_exact",
    "late_svm_retrained_exact",
    "late_ingest_calibration",
    "late_instant_calibration",
    "late_instant_moved",
    "late_instant_moved_to_right",
    "late_instant_moved_to_wrong",
]


def summarize(runs: list[dict[str, Any]]) -> dict[str, dict[str, float | None]]:
    """Median of each summary figure per setting."""
    table: dict[str, dict[str, float | None]] = {}
    for setting in sorted({r["setting"] for r in runs}):
        rows = [r for r in runs if r["setting"] == setting]
        table[str(setting)] = {
            key: (
                statistics.median(values)
                if (values := [r[key] for r in rows if r.get(key) is not None])
                else None
            )
            for key in SUMMARY
        }
        table[str(setting)]["runs_served_below_svm"] = sum(
            r["served_exact"] < r["svm_exact"] for r in rows
        )
        # Below by more than chance: the paired test on the known documents at .05.
        table[str(setting)]["runs_served_below_svm_p05"] = sum(
            r["served_exact"] < r["svm_exact"] and (r.get("served_vs_svm_p") or 1.0) < 0.05
            for r in rows
        )
    return table


def main(argv: list[str] | None = None) -> int:
    parser = split_arguments(__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=20)
    parser.add_argument("--moves", type=int, default=10)
    parser.add_argument(
        "--late",
        type=float,
        default=0.0,
        help="share of the new documents posted after the first recluster, between the "
        "questions and the moves (late_* figures; default 0)",
    )
    parser.add_argument("--method", default="biihac")
    parser.add_argument("--r-max", type=int, default=None, help="biHAC runs (server default)")
    parser.add_argument("--json", type=Path, help="write every run and the medians here")
    parser.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a setting for the server, e.g. FOLDWISE_RECLUSTER_KEEP_MARGIN=0 (repeatable)",
    )
    parser.add_argument(
        "--server-src",
        type=Path,
        help="serve this checkout's backend/ directory instead (compare with a baseline)",
    )
    args = parser.parse_args(argv)
    if args.questions < 0 or args.moves < 0:
        print("service_eval: --questions and --moves must be >= 0", file=sys.stderr)
        return 2
    if not 0.0 <= args.late < 1.0:
        print("service_eval: --late must be at least 0 and below 1", file=sys.stderr)
        return 2
    if any("=" not in e or not e.startswith("FOLDWISE_") for e in args.env):
        print("service_eval: --env takes FOLDWISE_NAME=VALUE", file=sys.stderr)
        return 2
    args.env = dict(e.split("=", 1) for e in args.env)
    if args.server_src is not None:
        try:
            check_server_source(args.server_src)
        except ValueError as exc:
            print(f"service_eval: {exc}", file=sys.stderr)
            return 2
    try:
        corpus = load_for_service(args.corpus, args.settings, args.seeds[0])
    except CorpusError as exc:
        print(f"service_eval: {exc}", file=sys.stderr)
        return 2
    runs = []
    for setting in args.settings:
        for seed in args.seeds:
            result = run(corpus, setting, seed, args)
            runs.append(result)
            print(result_line(result, ["setting", "seed", *SUMMARY]), flush=True)
            if "late_known" in result:
                print("  " + result_line(result, LATE_SUMMARY), flush=True)
    table = summarize(runs)
    print("\nmedians per setting")
    for setting, row in table.items():
        print(f"setting {setting}: " + result_line(row))
    if args.json:
        args.json.write_text(json.dumps({"runs": runs, "medians": table}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
