"""Tests of the evaluation harness."""
