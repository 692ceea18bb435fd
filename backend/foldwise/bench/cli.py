"""``foldwise bench``: the papers' evaluation protocol (001 sec. 5.2) on any folder tree."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Annotated

import numpy as np
import typer

METRICS = (
    "h_corr",
    "h_corr_unlabeled",
    "f_leaf",
    "f_higher",
    "hai",
    "placement_known",
    "placement_confident",
    "placement_ancestor",
    "proposal_f",
    "seconds",
    "peak_mb",
)


def _split(value: str, name: str) -> list[str]:
    items = [v.strip() for v in value.split(",") if v.strip()]
    if not items:
        raise typer.BadParameter(f"{name} is empty")
    return items


def format_table(records: list[dict]) -> str:
    """Mean ± std over seeds per method and setting, one row each."""
    present = [m for m in METRICS if any(r.get(m) is not None for r in records)]
    header = ["setting", "method", *present]
    rows = []
    keys = sorted({(r["setting"], r["method"]) for r in records}, key=lambda k: (k[0], k[1]))
    for setting, method in keys:
        group = [r for r in records if r["setting"] == setting and r["method"] == method]
        cells = [str(setting), method]
        for metric in present:
            values = np.array([r[metric] for r in group if r.get(metric) is not None], dtype=float)
            if values.size == 0:
                cells.append("-")
            elif metric in ("seconds", "peak_mb"):
                cells.append(f"{values.mean():.1f}")
            else:
                cells.append(f"{values.mean():.3f}±{values.std():.3f}")
        rows.append(cells)
    widths = [max(len(r[c]) for r in [header, *rows]) for c in range(len(header))]
    lines = [
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True))
        for row in [header, *rows]
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def register(app: typer.Typer) -> None:
    @app.command()
    def bench(
        corpus_dir: Annotated[
            Path,
            typer.Argument(
                help="Folder tree of text files; the folders are the reference hierarchy."
            ),
        ],
        methods: Annotated[
            str, typer.Option(help="Comma-separated: hac, ihac, bihac, biihac, svm, divisive, ggm.")
        ] = "hac,ihac,bihac,biihac,svm",
        settings: Annotated[
            str,
            typer.Option(
                help="1 = all folders labeled, 2 = one leaf hidden, 3 = one subtree hidden."
            ),
        ] = "1,2,3",
        labeled_per_folder: Annotated[
            int, typer.Option(help="k labeled documents per known folder.")
        ] = 5,
        max_per_folder: Annotated[
            int, typer.Option(help="Sample at most this many documents per folder.")
        ] = 30,
        seeds: Annotated[int, typer.Option(help="Repetitions with seeds 0..N-1.")] = 3,
        json_out: Annotated[
            Path | None, typer.Option("--json", help="Write one record per run to this file.")
        ] = None,
        stability: Annotated[
            bool,
            typer.Option(
                "--stability",
                help="Run 002 sec. 4's stability experiment for Constrained-Divisive instead.",
            ),
        ] = False,
        dump: Annotated[
            Path | None, typer.Option(help="Write each run's docs, labels and linkage here.")
        ] = None,
    ) -> None:
        """Evaluate clustering methods on CORPUS_DIR with the papers' protocol (001 sec. 5.2)."""
        from foldwise.bench._corpus import CorpusError, draw_sample, load_corpus
        from foldwise.bench._evaluate import evaluate_run
        from foldwise.bench._methods import METHODS

        method_names = _split(methods, "--methods")
        unknown = [m for m in method_names if m not in METHODS]
        if unknown:
            _fail(f"unknown method(s) {', '.join(unknown)}; choose from {', '.join(METHODS)}")
        try:
            setting_ids = [int(s) for s in _split(settings, "--settings")]
        except ValueError:
            _fail(f"--settings must be numbers from 1, 2, 3, got {settings!r}")
        if any(s not in (1, 2, 3) for s in setting_ids):
            _fail(f"--settings must be numbers from 1, 2, 3, got {settings!r}")
        if labeled_per_folder < 1 or max_per_folder < 1 or seeds < 1:
            _fail("--labeled-per-folder, --max-per-folder and --seeds must be >= 1")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                corpus = load_corpus(corpus_dir)
            except CorpusError as exc:
                _fail(str(exc))
        for w in caught:
            typer.echo(f"warning: {w.message}", err=True)
        if stability:
            _stability(corpus, seeds, json_out)
            return
        if dump is not None:
            dump.mkdir(parents=True, exist_ok=True)
        records: list[dict] = []
        for setting in setting_ids:
            for seed in range(seeds):
                try:
                    sample = draw_sample(
                        corpus,
                        setting=setting,
                        k=labeled_per_folder,
                        max_per_folder=max_per_folder,
                        seed=seed,
                    )
                except ValueError as exc:
                    _fail(f"setting {setting}: {exc}")
                for method in method_names:
                    try:
                        record, output = evaluate_run(corpus, sample, method, setting, seed)
                    except ValueError as exc:
                        _fail(f"{method}, setting {setting}, seed {seed}: {exc}")
                    row = record.as_json()
                    records.append(row)
                    typer.echo(
                        f"setting {setting} seed {seed} {method:8s} h_corr={_num(row['h_corr'])} "
                        f"place={_num(row['placement_known'])} {row['seconds']:.1f}s",
                        err=True,
                    )
                    if dump is not None and output.linkage is not None:
                        _dump(
                            dump / f"{method}-s{setting}-seed{seed}.json",
                            corpus,
                            sample,
                            output.linkage,
                        )
        typer.echo(format_table(records))
        if json_out is not None:
            json_out.parent.mkdir(parents=True, exist_ok=True)
            json_out.write_text(json.dumps(records, indent=1))


def _stability(corpus, n_runs: int, json_out: Path | None) -> None:  # type: ignore[no-untyped-def]
    """002 sec. 4: hold out 10 %, recluster, compare the partitions at levels 1, 5 and 10
    (median Rand and corrected Rand over runs), without and with level-1 constraints drawn
    from the top-level folders."""
    from foldwise.core import divisive_stability, text_features

    X, _ = text_features(corpus.texts)
    top = [f[0] if f else "" for f in corpus.folders]
    rows = []
    for fraction in (0.0, 0.03, 0.05):
        r = divisive_stability(
            X,
            top,
            constraint_fraction=fraction,
            n_runs=max(n_runs, 2),
            metric="cosine",
            random_state=0,
        )
        rows.append(
            {
                "constraint_fraction": fraction,
                "n_runs": r.n_runs,
                "reference_rand": r.reference_rand,
                "reference_corrected_rand": r.reference_corrected_rand,
                "correct_first_split": r.correct_decisions,
                **{f"rand_l{k}": v for k, v in r.rand.items()},
                **{f"corrected_rand_l{k}": v for k, v in r.corrected_rand.items()},
            }
        )
    header = list(rows[0])
    typer.echo("  ".join(header))
    for row in rows:
        typer.echo(
            "  ".join(f"{row[h]:.3f}" if isinstance(row[h], float) else str(row[h]) for h in header)
        )
    if json_out is not None:
        json_out.write_text(json.dumps(rows, indent=1))


def _num(value: float | None) -> str:
    return "nan" if value is None else f"{value:.3f}"


def _dump(path: Path, corpus, sample, Z: np.ndarray) -> None:  # type: ignore[no-untyped-def]
    path.write_text(
        json.dumps(
            {
                "docs": [corpus.paths[d] for d in sample.docs],
                "labeled": list(sample.labeled),
                "linkage": [[int(a), int(b), float(d), int(s)] for a, b, d, s in Z],
            }
        )
    )


def _fail(message: str) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code=2)
