"""Recluster settings: the class lives in ``config.py`` (the one ``Settings`` object holds
them as ``Settings.recluster``); re-exported here for the recluster domain."""

from foldwise.service.config import ReclusterSettings

__all__ = ["ReclusterSettings"]
