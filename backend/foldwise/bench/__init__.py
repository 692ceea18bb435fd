"""``foldwise bench``: the papers' evaluation protocol on a corpus given as a folder tree."""
