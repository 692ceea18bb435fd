"""Background reclustering: jobs, tree versions and the extended tree (docs/architecture.md
sec. 6, 9)."""
