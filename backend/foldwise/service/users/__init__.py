"""Users domain."""
