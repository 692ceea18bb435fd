"""Recluster settings, ``FOLDWISE_RECLUSTER_*`` environment variables.

Kept apart from the service's ``Settings`` so that this domain owns its knobs; a test or an
app gives its own :class:`ReclusterSettings` to ``runtime.runtime_for``.
"""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class ReclusterSettings(BaseSettings):
    """How, when and how robustly reclusters run.

    ``FOLDWISE_RECLUSTER_DEBOUNCE_SECONDS`` is the setting the issue calls
    ``RECLUSTER_DEBOUNCE_SECONDS``.
    """

    model_config = SettingsConfigDict(
        env_prefix="FOLDWISE_RECLUSTER_", env_file=".env", extra="ignore"
    )

    #: Start reclusters by themselves when new unfiled documents or critiques arrive.
    auto: bool = True
    #: Wait this long after the last new document / critique before an automatic recluster,
    #: so that a batch of uploads or a burst of critiques costs one recluster, not many.
    debounce_seconds: float = Field(default=30.0, ge=0)
    #: Default method (a key of ``core_adapter.METHODS``).
    method: str = "biihac"
    #: Exemplars per folder: the ones nearest the folder centroid (DESIGN.md sec. 5) ...
    exemplars_nearest: int = Field(default=6, ge=1)
    #: ... plus this many drawn at random from the rest of the folder.
    exemplars_random: int = Field(default=2, ge=0)
    #: Filed documents per folder that train the placement model (a fixed sample of larger
    #: folders): with many filed documents per folder a classifier on all of them is the bar.
    train_per_folder: int = Field(default=300, ge=1)
    #: The placement model's vocabulary: terms seen at least this often, at most this many.
    #: Larger than the clustering's (rare terms and numbers separate folders well).
    placement_min_term_count: int = Field(default=1, ge=1)
    placement_max_terms: int = Field(default=100000, ge=1)
    #: Weight, in the placement model, of a document the person moved (an ordinary filed
    #: document weighs 1) and of an answered "a is closer to b" as an example of a in b's folder.
    move_weight: float = Field(default=3.0, gt=0)
    answer_weight: float = Field(default=1.0, gt=0)
    #: At most this many unfiled documents per recluster (the newest are kept).
    max_unfiled: int = Field(default=5000, ge=1)
    #: biHAC's learning rate and run limits (000 sec. 4; the paper's values).
    eta: float = Field(default=5.0, gt=0)
    r_max: int = Field(default=50, ge=1)
    r_ni: int = Field(default=10, ge=1)
    #: A running job writes a heartbeat this often ...
    heartbeat_seconds: float = Field(default=5.0, gt=0)
    #: ... and is taken for dead when its heartbeat is older than this.
    heartbeat_timeout_seconds: float = Field(default=60.0, gt=0)
    #: Attempts per job before a dead worker makes it ``failed``.
    max_attempts: int = Field(default=2, ge=1)
    #: Reruns of a job whose result went stale (critiques arrived while it ran).
    max_reruns: int = Field(default=2, ge=0)


recluster_settings = ReclusterSettings()
