"""The recluster's queue tasks: run a job, schedule a debounced automatic one, and reap jobs
of dead workers (every minute, and when a worker starts). Registered on a runtime by the
composition root (``service/tasks.py: register``)."""

from __future__ import annotations

from huey import crontab

from foldwise.service import memory
from foldwise.service.recluster.jobs import reaper, runner, service
from foldwise.service.recluster.jobs.runtime import Runtime


def register(rt: Runtime) -> None:
    """Register the recluster tasks on ``rt.queue`` (once per runtime)."""
    if rt.run_task is not None:
        return

    @rt.queue.task(name="foldwise.recluster.run_job")
    def run_job(job_id: int) -> None:
        """Run recluster job ``job_id`` (takes the id; opens and closes its own sessions)."""
        try:
            runner.execute(rt, job_id)
        finally:
            # Once the job's arrays are gone: what it freed goes back to the system, and
            # the next job does not start from this one's high-water mark.
            memory.release_freed_memory()

    @rt.queue.task(name="foldwise.recluster.schedule_auto", retries=5, retry_delay=2)
    def schedule_auto(user_id: int) -> None:
        """Queue or push back the user's debounced automatic recluster."""
        service.schedule_auto(rt=rt, user_id=user_id)

    @rt.queue.periodic_task(crontab(minute="*"), name="foldwise.recluster.reap")
    def reap() -> None:
        """Every minute: retry or fail jobs whose worker stopped sending heartbeats."""
        reaper.reap(rt)

    @rt.queue.on_startup(name="foldwise.recluster.reap_on_start")
    def reap_on_start() -> None:
        # A worker that starts after a crash finds the crashed worker's jobs at once.
        reaper.reap(rt)

    rt.run_task = run_job
    rt.reap_task = reap
    rt.schedule_task = schedule_auto
