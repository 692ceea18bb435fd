"""The browser UI: page routes serving ``frontend/templates`` and a few UI-only endpoints."""

from foldwise.service.ui.routes import mount_ui

__all__ = ["mount_ui"]
