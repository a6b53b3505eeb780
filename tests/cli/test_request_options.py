"""The request options shared by `search` and `context`."""

from __future__ import annotations

import argparse

from tributary.engine.cli.common import add_request_options, request_from_args


def _request(*argv: str) -> list[str] | None:
    parser = argparse.ArgumentParser()
    add_request_options(parser)
    return request_from_args(parser.parse_args(["retry logic", *argv]), None).sources


def test_sources_named_again_add_up_rather_than_replace() -> None:
    # `--source files --source tasks` kept only tasks: argparse took `--source` for
    # `--sources` and the second value replaced the first.
    assert _request("--source", "files", "--source", "tasks") == ["files", "tasks"]
    assert _request("--sources", "files,tasks", "--sources", "rg,files") == ["files", "tasks", "rg"]
    assert _request() is None


def test_a_small_budget_keeps_the_configured_share_free() -> None:
    # `context --max-tokens 500` was refused: the 1,000 tokens kept free by default were
    # more than the whole.
    from tributary.engine.cli.context_cmd import _reserved

    assert _reserved(1000, 8000, 16000) == 1000
    assert _reserved(1000, 8000, 500) == 62
    assert _reserved(1000, 8000, 1) == 0
    assert _reserved(0, 8000, 500) == 0
