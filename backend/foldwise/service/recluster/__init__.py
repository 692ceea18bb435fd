"""Background reclustering: jobs, tree versions and the extended tree (DESIGN.md sec. 6, 9)."""
