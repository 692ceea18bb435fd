"""The job side of the recluster: job rows, the runtime they run on, the runner, the reaper
and the typed progress (docs/architecture.md sec. 9, 11)."""
