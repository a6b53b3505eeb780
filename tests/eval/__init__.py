"""Tests of the evaluation harness (issue 6)."""
