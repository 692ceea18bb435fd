"""Inbox domain: files dropped in a directory become documents."""
