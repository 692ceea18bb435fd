"""Service settings: one ``Settings`` from ``FOLDWISE_*`` environment variables and ``.env``
(the recluster knobs, ``FOLDWISE_RECLUSTER_*``, are its ``recluster`` part). Reading the
environment is all that happens at import: no engine, no directory."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from fastapi import Depends, Request
from pydantic import Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

MiB = 1024 * 1024


class ReclusterSettings(BaseSettings):
    """How, when and how robustly reclusters run: ``Settings.recluster``, from the
    ``FOLDWISE_RECLUSTER_*`` environment variables (e.g. ``FOLDWISE_RECLUSTER_DEBOUNCE_SECONDS``).
    """

    model_config = SettingsConfigDict(
        env_prefix="FOLDWISE_RECLUSTER_", env_file=".env", extra="ignore"
    )

    #: Start reclusters by themselves when new unfiled documents or critiques arrive.
    auto: bool = True
    #: Wait this long after the last new document / critique before an automatic recluster,
    #: so that a batch of uploads or a burst of critiques costs one recluster, not many.
    debounce_seconds: float = Field(default=30.0, ge=0)
    #: Default method (a key of ``foldwise.core.ESTIMATORS``).
    method: str = "biihac"
    #: Exemplars per folder: the ones nearest the folder centroid (docs/architecture.md sec. 5) ...
    exemplars_nearest: int = Field(default=6, ge=1)
    #: ... plus this many drawn at random from the rest of the folder.
    exemplars_random: int = Field(default=2, ge=0)
    #: Exemplars of all folders together, at most: beyond this many over the per-folder count
    #: (1,000 folders at 6 + 2) every folder has fewer, at least 2, so that the dendrogram
    #: (these and up to ``max_unfiled`` new documents; biHAC's time and its n x n distances
    #: grow with the square) stays bounded however many folders there are. Fewer exemplars
    #: cost placement quality: at 4 per folder python-docs' served placement fell by a point
    #: (docs/recluster.md, "100,000 documents").
    max_exemplars: int = Field(default=8000, ge=2)
    #: Filed documents per folder that train the placement model (a fixed sample of larger
    #: folders): with many filed documents per folder a classifier on all of them is the bar.
    train_per_folder: int = Field(default=300, ge=1)
    #: The placement model's vocabulary: terms seen at least this often, at most this many.
    #: Larger than the clustering's (rare terms and numbers separate folders well).
    placement_min_term_count: int = Field(default=1, ge=1)
    placement_max_terms: int = Field(default=100000, ge=1)
    #: Weight, in the placement model, of a document the person moved (an ordinary filed
    #: document weighs 1; 3 raised the other documents' misplacement in simulated feedback on
    #: python-docs, 6 runs: median +2.4% against -1.1% at 1) ...
    move_weight: float = Field(default=1.0, gt=0)
    #: ... and of an answered "a is closer to b" as an example of a in b's folder; 0: none
    #: (the default: in simulated feedback on python-docs, 6 runs, the examples raised the
    #: other documents' misplacement, median +4.7% against +2.4% without; a may belong to a
    #: sibling of b's folder). The answer's triple still rules out c's branch for a.
    answer_weight: float = Field(default=0.0, ge=0)
    #: A new document joins a new-topic proposal only if its top SVM decision value is below
    #: this quantile of held-out documents of existing folders (core ``is_novel``); unset:
    #: from the folder sizes (``FolderPlacement.novelty_quantile``).
    novelty_quantile: float | None = Field(default=None, gt=0, le=1)
    #: A document stays in the folder the previous tree version showed it in unless another
    #: folder's posterior is at least this much higher (core ``extended_tree``,
    #: docs/placement.md "Placements that stay"); 0: the most probable folder, unless the
    #: model is less sure of it than the previous version was of the old one. The default
    #: is the core's ``KEEP_MARGIN``, restated so that reading settings imports no numpy (a
    #: test keeps the two equal).
    keep_margin: float = Field(default=0.1, ge=0, le=1)
    #: At most this many unfiled documents per recluster (the newest are kept).
    max_unfiled: int = Field(default=5000, ge=1)
    #: biHAC's learning rate and run limits (000 sec. 4; the paper's eta and r_max) ...
    eta: float = Field(default=5.0, gt=0)
    r_max: int = Field(default=50, ge=1)
    #: ... and the runs without a lower cluster error before the weight learning stops (the
    #: paper gives no value; the core's default is 10). 3: on the bench collection the
    #: weights never converge (each run still changes them by ~2% in L1, 000 eq. 6 with a
    #: constant eta), the error falls in the first ~7 runs and then only wanders, and the
    #: service benchmark on python-docs (setting 2, seeds 0-1) gave the same figures as
    #: with 10, in 10 runs instead of 37 (docs/recluster.md "Speed").
    r_ni: int = Field(default=3, ge=1)
    #: ... and the document pairs all runs may cluster, n^2 per run for the n documents of
    #: the dendrogram (exemplars and new ones): fewer runs past about 7,000 documents, at
    #: least 2 (core ``bihac(max_pairs=)``). At 100,000 filed documents in 1,000 folders
    #: (13,000 in the dendrogram) a run took 13 s, and its 4-5 runs (``r_ni`` 3) mean the
    #: best was the first or the second (docs/recluster.md "100,000 documents"); every
    #: hierarchy of docs/placement.md stays below it.
    weight_max_pairs: int = Field(default=500_000_000, ge=1)
    #: Threads of one recluster: the placement model is fitted while the clustering runs,
    #: and their cross-validation fits are spread over the threads (the result does not
    #: depend on it; docs/recluster.md "Speed").
    n_jobs: int = Field(default=2, ge=1)
    #: Reuse the previous version's cross-validated placement quantities (representation,
    #: temperature, calibration, novelty) while the labeled counts moved by at most this
    #: share since they were estimated: a recluster after a few moves or filings then fits 1
    #: SVM instead of 12 per placement model (core ``FolderPlacement.cross_validated``,
    #: docs/recluster.md "Kept cross-validation"); 0: only when no count changed.
    cv_reuse_max_change: float = Field(default=0.1, ge=0)
    #: ``False``: cross-validate on every recluster.
    cv_reuse: bool = True
    #: Keep the previous version's placement model when its training documents, their
    #: folders and texts and the moves are the same (only new documents arrived): no SVM
    #: is fitted again (docs/recluster.md, "Kept placement model"). ``False``, or
    #: ``cv_reuse`` off: fit anew.
    placement_reuse: bool = True
    #: From this many training documents x folders on, a recluster whose training changed a
    #: little (moves, filings, edited texts) keeps the model fitted before the changes
    #: instead of fitting it again (``kept_model.model_despite_changes``): there the SVMs are
    #: sampled, a fit took 50 s of a 90-130 s recluster at 100,000 filed documents in 1,000
    #: folders, and it served the same tree (docs/recluster.md, "Kept placement model"). The
    #: default is the core's ``FolderPlacement.max_svm_pairs``: no hierarchy of
    #: docs/placement.md reaches it.
    placement_update_min_pairs: int = Field(default=2_000_000, ge=0)
    #: ... while the training documents changed since the fit are at most this share of the
    #: training; then the model is fitted anew. 0: always fit anew.
    placement_update_max_share: float = Field(default=0.01, ge=0, le=1)
    #: A running job writes a heartbeat this often ...
    heartbeat_seconds: float = Field(default=5.0, gt=0)
    #: ... and is taken for dead when its heartbeat is older than this.
    heartbeat_timeout_seconds: float = Field(default=60.0, gt=0)
    #: Attempts per job before a dead worker makes it ``failed``.
    max_attempts: int = Field(default=2, ge=1)
    #: Reruns of a job whose result went stale (critiques arrived while it ran).
    max_reruns: int = Field(default=2, ge=0)


class Settings(BaseSettings):
    """Configuration of the service, the worker and the CLI.

    Every field can be set as ``FOLDWISE_<NAME>`` (e.g. ``FOLDWISE_DATABASE_URL``) or in a
    ``.env`` file in the working directory.
    """

    model_config = SettingsConfigDict(env_prefix="FOLDWISE_", env_file=".env", extra="ignore")

    environment: Literal["development", "test", "production"] = "development"
    data_dir: Path = Path("./data")
    #: Empty means the embedded default: ``sqlite:///<data_dir>/foldwise.sqlite3``.
    database_url: str = ""
    #: Empty means the embedded queue (SqliteHuey in the data directory).
    redis_url: str = ""
    huey_name: str = "foldwise"
    #: Modules the worker imports so that their ``@huey.task()`` functions are registered.
    task_modules: list[str] = Field(default_factory=lambda: ["foldwise.service.tasks"])
    #: Signs session cookies. Empty: a random one is made on first use and kept in
    #: ``<data_dir>/secret_key`` (users/auth.py), so no two installs share a secret.
    secret_key: str = ""
    session_cookie: str = "foldwise_session"
    csrf_cookie: str = "foldwise_csrf"
    session_max_age_seconds: int = 14 * 24 * 3600
    #: The ``Secure`` flag on cookies; unset means on in production (served over HTTPS).
    cookie_secure: bool | None = None

    # Rate limits (rate_limits.py): a burst, then a refill per minute.
    #: Failed logins per account, and per client address.
    login_failures_burst: int = Field(default=10, gt=0)
    login_failures_per_minute: float = Field(default=2.0, gt=0)
    login_address_failures_burst: int = Field(default=50, gt=0)
    login_address_failures_per_minute: float = Field(default=10.0, gt=0)
    #: API tokens created per user.
    token_creation_burst: int = Field(default=10, gt=0)
    token_creation_per_minute: float = Field(default=2.0, gt=0)
    #: Upload and import requests per user (a batch or an archive is one request).
    upload_burst: int = Field(default=2000, gt=0)
    upload_per_minute: float = Field(default=3000.0, gt=0)

    # Ingestion limits (bytes unless named otherwise).
    max_document_bytes: int = Field(default=20 * MiB, gt=0)
    max_text_chars: int = Field(default=5_000_000, gt=0)
    max_batch_documents: int = Field(default=500, gt=0)
    max_batch_bytes: int = Field(default=100 * MiB, gt=0)
    max_title_chars: int = Field(default=500, gt=0)
    # Import limits: an archive over any of them is rejected before anything is written.
    max_archive_bytes: int = Field(default=200 * MiB, gt=0)
    max_archive_entries: int = Field(default=20_000, gt=0)
    max_archive_unpacked_bytes: int = Field(default=1024 * MiB, gt=0)
    #: Per-entry compression ratio above which an entry counts as a zip bomb.
    max_compression_ratio: float = Field(default=200.0, gt=1)
    max_folder_depth: int = Field(default=32, gt=0)
    # OCR of scans (docs/ocr.md).
    #: Tesseract's program, a name on PATH or a path; not found: scans are stored without
    #: text, marked "no text: OCR not installed".
    tesseract_cmd: str = "tesseract"
    #: Tesseract languages read on a scan, "+"-joined; those not installed are left out.
    ocr_languages: str = "eng+deu"
    #: CPU seconds and memory that OCR of one page may take (Tesseract inherits the limits).
    ocr_page_cpu_seconds: int = Field(default=120, gt=0)
    ocr_page_memory_bytes: int = Field(default=2048 * MiB, gt=0)
    max_page_size: int = Field(default=500, gt=0)
    #: Recluster knobs (``FOLDWISE_RECLUSTER_*``); a test or an app may pass its own to
    #: ``composition.app_runtime``.
    recluster: ReclusterSettings = Field(default_factory=ReclusterSettings)

    @model_validator(mode="after")
    def _fail_fast_on_unsafe_values(self) -> Settings:
        # A short configured secret could be guessed, and with it any session forged.
        if self.secret_key and len(self.secret_key) < 32:
            raise ValueError(
                "FOLDWISE_SECRET_KEY must be a random string of at least 32 characters "
                "(or unset: one is then generated and kept in the data directory)"
            )
        return self

    @property
    def secure_cookies(self) -> bool:
        """Whether cookies get the ``Secure`` flag: as configured, else in production."""
        if self.cookie_secure is not None:
            return self.cookie_secure
        return self.environment == "production"

    @property
    def sqlalchemy_url(self) -> str:
        """The database URL in use: the configured one, or SQLite in the data directory."""
        if self.database_url:
            return self.database_url
        return f"sqlite:///{(self.data_dir / 'foldwise.sqlite3').as_posix()}"

    @property
    def blob_dir(self) -> Path:
        """Where original files are kept, one file per content hash."""
        return self.data_dir / "blobs"


settings = Settings()


async def get_settings(request: Request) -> Settings:
    """The settings of the running app (tests run apps with their own settings).
    Async because it does no I/O: FastAPI runs a sync dependency on the thread pool."""
    return getattr(request.app.state, "settings", settings)


SettingsDep = Annotated[Settings, Depends(get_settings)]
