"""The queue tasks of the service (``settings.task_modules``): imported by ``foldwise worker``
and by ``foldwise serve``'s embedded worker so that their tasks are registered."""

from foldwise.service.ocr import hooks as ocr_hooks  # noqa: F401  (OCR of new scans)
from foldwise.service.recluster import hooks  # noqa: F401  (automatic reclusters)
from foldwise.service.recluster.jobs.runtime import runtime_for

#: Registers ``foldwise.recluster.run_job``, the reaper and its startup hook on the global queue.
runtime = runtime_for()
