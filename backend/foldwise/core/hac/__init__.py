"""The HAC family: HAC, iHAC (001) and biHAC / biiHAC (000), as functions and estimators.

``_ihac`` holds the functional builders over cosine distances, ``_ihac_kernel`` and
``_ihac_admissible`` the compiled (numba) merge loop and its admissibility tests, ``_bihac``
the learned term weights, and ``_estimators`` the scikit-learn-style classes over them.
"""

from foldwise.core.hac._bihac import BiHACResult, adapt_weights, bihac
from foldwise.core.hac._estimators import HAC, IHAC, BiHAC, BiiHAC
from foldwise.core.hac._ihac import (
    cosine_distances,
    hac_linkage,
    ihac_from_distances,
    ihac_linkage,
)

__all__ = [
    "HAC",
    "IHAC",
    "BiHAC",
    "BiHACResult",
    "BiiHAC",
    "adapt_weights",
    "bihac",
    "cosine_distances",
    "hac_linkage",
    "ihac_from_distances",
    "ihac_linkage",
]
