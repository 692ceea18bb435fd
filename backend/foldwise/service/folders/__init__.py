"""Folders domain."""
