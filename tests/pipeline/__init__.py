"""Tests of the fusion pipeline (engine.pipeline)."""
