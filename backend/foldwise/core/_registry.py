"""The hierarchy builders by name, as scikit-learn keeps its tree criteria and splitters.

Every estimator here is built with keyword parameters and fitted with the same
``fit(X, y=None, triples=None)``: ``X`` documents of shape (n_docs, n_terms), ``y`` a folder
path (or ``None``) per document, ``triples`` explicit MLB triples (001 def. 1) as index
triples. Each sets ``linkage_`` (a scipy linkage matrix) and says ``ignores_triples``.
"""

from __future__ import annotations

from foldwise.core.divisive._divisive import ConstrainedDivisive
from foldwise.core.hac._estimators import HAC, IHAC, BiHAC, BiiHAC
from foldwise.core.probabilistic._ggm import ProbabilisticHierarchy

#: Method name -> estimator class.
ESTIMATORS: dict[str, type] = {
    "hac": HAC,
    "ihac": IHAC,
    "bihac": BiHAC,
    "biihac": BiiHAC,
    "divisive": ConstrainedDivisive,
    "ggm": ProbabilisticHierarchy,
}
