"""A2UI v0.9 validation and surface state (sans-I/O)."""
