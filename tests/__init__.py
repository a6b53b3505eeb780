"""Tributary's tests (a package, so that tests/engine and tests/app never shadow the real packages)."""
