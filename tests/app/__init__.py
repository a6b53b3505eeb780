"""Tests of the desktop application (pytest-qt, offscreen)."""
