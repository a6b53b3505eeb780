"""Tests of the fusion pipeline (tributary.engine.pipeline)."""
