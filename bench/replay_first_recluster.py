"""The service benchmark's first recluster, saved once and replayed in process.

A change to placement or proposals is measured on the service benchmark's splits
(``bench/service_eval.py``), which serve every run through a real server: minutes per run.
Most changes only touch the first recluster. This saves what that recluster reads, per run,
and replays it in process in seconds, under any checkout:

- ``save``: per run (setting, seed), as ``service_eval`` splits the corpus, a real ``foldwise
  serve`` on a fresh data directory imports the filed part as a zip and takes the new
  documents over the REST API. The recluster's inputs (``recluster_input.load_inputs``), the
  truth of every new document and the folders' names are pickled to ``DIR/run-S-SEED.pkl``;
  then the server runs its own first recluster, and what the person is served is scored
  and saved beside them (``service``).
- ``replay``: each saved run's first recluster in process (``core_adapter.compute``, as the
  worker runs it), scored the same way (``replayed``). On an unchanged checkout the two
  agree; under another (``PYTHONPATH=OTHER/backend``), the difference is the change's.

Scores per run: served exact placement of the known new documents, known documents in
proposals, best-match F of the hidden folders against the proposals and of the hidden
subtree as one folder, and the share right of the documents shown in an existing folder at
confidence .9 or more, known ones (``calibration``) and all (``calibration_all``), as
``service_eval`` counts them before feedback. The pickles hold the corpus's text as
features: keep them out of the repository. Usage::

    python bench/replay_first_recluster.py save CORPUS DIR --settings 2 3 --seeds 0 1 2
    python bench/replay_first_recluster.py replay DIR [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import pickle
import random
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any

from foldwise.bench._corpus import CorpusError
from foldwise.bench.served import Server
from foldwise.bench.service_protocol import (
    best_match_f,
    load_for_service,
    result_line,
    share,
    split_for_service,
)
from foldwise.core import FolderPath
from foldwise.service.recluster import core_adapter
from representation_study import recluster_inputs
from served_tree import proposal_members, targets
from service_eval import import_filed, post_new


def score(
    placed: dict[int, int | None],
    groups: list[set[int]],
    truth: dict[int, FolderPath],
    hidden: dict[int, bool],
    names: dict[int, FolderPath],
    confidence: dict[int, float],
) -> dict[str, float | int | None]:
    """What the person sees of a first recluster.

    ``placed``: new document id -> the existing folder id it is shown in (None in a
    proposal); ``groups``: every proposal's documents, nested ones included; ``truth`` and
    ``hidden``: each new document's true folder (names) and whether it is hidden;
    ``names``: folder id -> its path of names; ``confidence``: new document id -> the
    confidence it is shown with.
    """
    known = [d for d in truth if not hidden[d]]
    in_proposals = set().union(*groups) if groups else set()
    hidden_sets: dict[FolderPath, set[int]] = {}
    for d, folder in truth.items():
        if hidden[d]:
            hidden_sets.setdefault(folder, set()).add(d)
    right = {d: names.get(placed.get(d)) == truth[d] for d in truth}  # None: in a proposal
    exact = [right[d] for d in known]
    # Shown in an existing folder at .9 or more; a hidden folder's document is never right
    # there, and the person cannot tell it from the others.
    sure = {
        d: right[d] for d in truth if placed.get(d) is not None and confidence.get(d, 0.0) >= 0.9
    }
    return {
        "served_exact": sum(exact) / len(exact) if exact else 0.0,
        "known_in_proposals": sum(d in in_proposals for d in known),
        "proposal_f": best_match_f(hidden_sets, groups),
        # Setting 3 hides a subtree; proposed as one folder it scores here, not above.
        "proposal_f_subtree": best_match_f({(): set().union(*hidden_sets.values())}, groups)
        if hidden_sets
        else 0.0,
        "calibration": share([right for d, right in sure.items() if not hidden[d]]),
        "calibration_all": share(list(sure.values())),
    }


def _names(
    paths: dict[int, tuple[str, ...]], folders: dict[int, tuple[int | None, str]]
) -> dict[int, FolderPath]:
    """Folder id -> its path of names, from the inputs' paths of folder ids
    (``ReclusterInput.paths``) and each folder's name."""
    return {i: tuple(folders[int(f)][1] for f in path) for i, path in paths.items()}


def save(corpus_path: Path, settings: list[int], seeds: list[int], out: Path) -> None:
    corpus = load_for_service(corpus_path, settings, seeds[0])
    out.mkdir(parents=True, exist_ok=True)
    for setting in settings:
        for seed in seeds:
            split = split_for_service(corpus, setting, seed)
            with tempfile.TemporaryDirectory(prefix="replay-") as tmp:
                server = Server(Path(tmp), env={"FOLDWISE_RECLUSTER_AUTO": "false"})
                try:
                    import_filed(server, corpus, split)
                    posted = post_new(server, corpus, split, random.Random(seed))
                    inputs, options, folders = recluster_inputs(Path(tmp))
                    tree, _ = server.recluster()
                finally:
                    server.stop()
            truth = {d: tuple(corpus.folders[i]) for d, i in posted.items()}
            run = {
                "setting": setting,
                "seed": seed,
                "inputs": inputs,
                "options": options,
                "truth": truth,
                "hidden": {d: split.is_hidden(f) for d, f in truth.items()},
                "names": _names(inputs.paths, folders),
            }
            placed = {d: f if isinstance(f, int) else None for d, f in targets(tree).items()}
            confidence = {p["document_id"]: p["confidence"] for p in tree["placements"]}
            run["service"] = score(
                placed, proposal_members(tree), truth, run["hidden"], run["names"], confidence
            )
            with (out / f"run-{setting}-{seed}.pkl").open("wb") as f:
                pickle.dump(run, f)
            print(result_line({"setting": setting, "seed": seed, **run["service"]}), flush=True)


def replay(directory: Path) -> list[dict[str, Any]]:
    runs = []
    for path in sorted(directory.glob("run-*.pkl")):
        with path.open("rb") as f:
            run = pickle.load(f)  # only the pickles this script wrote: never a stranger's
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = core_adapter.compute(
                run["inputs"], method="biihac", options=run["options"], report=lambda *_: None
            )
        placed = {p.document_id: p.folder_id for p in out.placements}
        groups = [set(p.document_ids) for p in out.proposals]
        confidence = {p.document_id: p.confidence for p in out.placements}
        replayed = score(placed, groups, run["truth"], run["hidden"], run["names"], confidence)
        result = {"setting": run["setting"], "seed": run["seed"], **replayed}
        result |= {f"service_{k}": v for k, v in run["service"].items()}
        runs.append(result)
        print(result_line(result), flush=True)
    return runs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    steps = parser.add_subparsers(dest="step", required=True)
    saving = steps.add_parser("save", help="split, import and post through a real server")
    saving.add_argument("corpus", type=Path)
    saving.add_argument("directory", type=Path)
    saving.add_argument("--settings", type=int, nargs="+", default=[2, 3], choices=[2, 3])
    saving.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    replaying = steps.add_parser("replay", help="recluster every saved run in process")
    replaying.add_argument("directory", type=Path)
    replaying.add_argument("--json", type=Path, help="write every run here")
    args = parser.parse_args(argv)
    if args.step == "save":
        try:
            save(args.corpus, args.settings, args.seeds, args.directory)
        except CorpusError as exc:
            print(f"replay_first_recluster: {exc}", file=sys.stderr)
            return 2
        return 0
    if not any(args.directory.glob("run-*.pkl")):
        print(f"replay_first_recluster: no saved runs in {args.directory}", file=sys.stderr)
        return 2
    runs = replay(args.directory)
    if args.json:
        args.json.write_text(json.dumps({"runs": runs}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
