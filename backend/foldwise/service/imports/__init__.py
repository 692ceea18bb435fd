"""Imports domain."""
