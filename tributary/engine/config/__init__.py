"""Configuration: the typed schema, loading and validation, atomic saving, imports."""
