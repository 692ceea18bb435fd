"""Documents domain."""
