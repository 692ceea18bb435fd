"""The service's own queue tasks (the default ``settings.task_modules``): recluster jobs and
OCR of scans. A task module defines ``register(runtime)``; the composition root calls it for
the app's runtime (the app puts these tasks on the queue) and, for every module of
``settings.task_modules``, for the worker's (``service/composition.py``)."""

from __future__ import annotations

from foldwise.service.ocr import tasks as ocr_tasks
from foldwise.service.recluster.jobs import tasks as recluster_tasks
from foldwise.service.recluster.jobs.runtime import Runtime


def register(rt: Runtime) -> None:
    """Register the recluster and OCR tasks on ``rt.queue`` (once per runtime)."""
    recluster_tasks.register(rt)
    ocr_tasks.register(rt)
