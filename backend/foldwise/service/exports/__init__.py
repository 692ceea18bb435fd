"""Exports domain: the organised tree out again, as a zip or a directory."""
