"""Which placement representation places the service benchmark's new documents better, and
which one the selection chose (docs/placement.md, "A near tie goes by the folders' size").

Per run (setting, seed), as ``bench/service_eval.py`` splits the corpus: a real ``foldwise
serve`` on a fresh data directory imports the filed part as a zip and takes the new
documents over the REST API, then stops before any recluster. In process, the recluster's
inputs are read from that directory (``recluster_input.load_inputs``) and the placement model
is fitted on them as the recluster fits it, six ways: ``auto`` (the service's choice),
``latent``, ``plain``, ``plain+nb``, ``latent+nb`` and ``latent+plain+nb``. Each is scored
on the known new documents (exact folder of the most probable one), beside a tf-idf +
LinearSVC trained on the filed documents. With the median number of filed documents per
folder, the figures show where the choice went wrong and by how much. Usage::

    python bench/representation_study.py CORPUS --settings 2 3 --seeds 0 1 2 [--json OUT]
"""

from __future__ import annotations

import json
import random
import sys
import tempfile
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import select
from sqlalchemy.orm import sessionmaker

from foldwise import core
from foldwise.bench._corpus import Corpus, CorpusError
from foldwise.bench.served import Server
from foldwise.bench.service_protocol import (
    ServiceSplit,
    load_for_service,
    result_line,
    split_arguments,
    split_for_service,
)
from foldwise.service.config import ReclusterSettings, Settings
from foldwise.service.db import make_engine
from foldwise.service.models import Folder
from foldwise.service.recluster import core_adapter
from foldwise.service.recluster.recluster_input import ReclusterInput, load_inputs
from service_eval import _svm_predict, import_filed, post_new


def _post_split(corpus: Corpus, split: ServiceSplit, seed: int, data: Path) -> dict[int, int]:
    """Import the filed part and post the new documents on ``data`` as service_eval does;
    id -> corpus index of each new document of a known folder."""
    server = Server(data, env={"FOLDWISE_RECLUSTER_AUTO": "false"})
    try:
        import_filed(server, corpus, split)
        posted = post_new(server, corpus, split, random.Random(seed))
    finally:
        server.stop()
    return {d: i for d, i in posted.items() if not split.is_hidden(tuple(corpus.folders[i]))}


def recluster_inputs(
    data: Path,
) -> tuple[ReclusterInput, ReclusterSettings, dict[int, tuple[int | None, str]]]:
    """What the first recluster of the service on ``data`` reads (``recluster_input.load_inputs``
    for its one user, as the worker reads it), its recluster settings, and every folder's
    parent id and name."""
    settings = Settings(data_dir=data)
    engine = make_engine(settings.sqlalchemy_url)
    try:
        with sessionmaker(engine)() as session:
            inputs = load_inputs(session=session, user_id=1, options=settings.recluster, seed=1)
            rows = session.execute(select(Folder.id, Folder.parent_id, Folder.name))
            folders = {i: (parent, name) for i, parent, name in rows}
    finally:
        engine.dispose()
    return inputs, settings.recluster, folders


def run(corpus: Corpus, setting: int, seed: int) -> dict[str, Any]:
    split = split_for_service(corpus, setting, seed)
    with tempfile.TemporaryDirectory(prefix="representation-study-") as tmp:
        known = _post_split(corpus, split, seed, Path(tmp))
        inputs, options, folders = recluster_inputs(Path(tmp))
    name = {i: n for i, (_, n) in folders.items()}
    # The placement model's training as the first recluster builds it (no critiques yet).
    fit_rows, labels, _ = core_adapter.placement_training(inputs, options)
    X = core_adapter.placement_features(inputs)[fit_rows]
    rows = [r for r, d in enumerate(inputs.doc_ids) if d in known]
    truth = [tuple(corpus.folders[known[inputs.doc_ids[r]]]) for r in rows]
    sizes = list(Counter(label for label in labels if label is not None).values())
    out: dict[str, Any] = {"setting": setting, "seed": seed, "known_new": len(rows)}
    out["median_filed_per_folder"] = float(np.median(sizes))
    for representation in ("auto", *core.PLACEMENT_REPRESENTATIONS):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = core.FolderPlacement(representation=representation).fit(X, labels)
        best = model.predict_proba(X[rows], rows=np.array(rows)).argmax(axis=1)
        placed = [tuple(name[int(f)] for f in model.folders_[j]) for j in best]
        out[representation] = float(np.mean([p == t for p, t in zip(placed, truth, strict=True)]))
        if representation == "auto":
            out["chosen"] = model.representation_
    svm = _svm_predict(
        [corpus.texts[i] for i in split.filed],
        ["/".join(corpus.folders[i]) for i in split.filed],
        [corpus.texts[known[inputs.doc_ids[r]]] for r in rows],
    )
    out["svm"] = float(np.mean([p == "/".join(t) for p, t in zip(svm, truth, strict=True)]))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = split_arguments(__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="write every run here")
    args = parser.parse_args(argv)
    try:
        corpus = load_for_service(args.corpus, args.settings, args.seeds[0])
    except CorpusError as exc:
        print(f"representation_study: {exc}", file=sys.stderr)
        return 2
    runs = []
    for setting in args.settings:
        for seed in args.seeds:
            result = run(corpus, setting, seed)
            runs.append(result)
            print(result_line(result), flush=True)

    def best(r: dict[str, Any]) -> float:
        return max(r[name] for name in core.PLACEMENT_REPRESENTATIONS)

    wrong = [r for r in runs if r[r["chosen"]] < best(r)]
    print(f"choice below the better representation in {len(wrong)} of {len(runs)} runs"
          + (f", by up to {max(best(r) - r[r['chosen']] for r in wrong):.3f}"
             if wrong else ""))  # fmt: skip
    if args.json:
        args.json.write_text(json.dumps({"runs": runs}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
