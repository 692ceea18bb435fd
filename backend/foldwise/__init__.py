"""Foldwise: a folder hierarchy that learns from the person who keeps it."""

__version__ = "0.1.0"
