"""The clustering core: pure numpy / scipy / scikit-learn, no web, DB or queue imports.

Public names are re-exported here; implementation lives in the private ``_*.py`` modules.
"""

from foldwise.core._features import TextFeatures, text_features
from foldwise.core._hierarchy import FolderPath, Hierarchy, folder_paths_of

__all__ = [
    "TextFeatures",
    "text_features",
    "FolderPath",
    "Hierarchy",
    "folder_paths_of",
]
