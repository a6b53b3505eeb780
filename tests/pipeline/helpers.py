"""Builders for hand-made hits used across the pipeline tests."""

from __future__ import annotations

from typing import Any

from tributary.engine.model import Hit, make_hit_id


def hit(
    source: str,
    rank: int,
    content: str,
    *,
    path: str | None = None,
    lines: tuple[int, int] | None = None,
    score: float | None = None,
    **extra: Any,
) -> Hit:
    """A hit as a normaliser would produce it."""
    return Hit(
        id=make_hit_id(source, "search", path, lines, rank, content[:20]),
        source=source,
        tool="search",
        title=extra.pop("title", path or content[:20]),
        content=content,
        path=path,
        start_line=lines[0] if lines else None,
        end_line=lines[1] if lines else None,
        source_score=score,
        source_rank=rank,
        **extra,
    )


FUNC_A = '''def parse_config(path, *, strict=False):
    """Read a YAML config file and validate every server entry in it."""
    with open(path, encoding="utf-8") as handle:
        raw = yaml.safe_load(handle) or {}
    servers = raw.get("servers", {})
    for name, entry in servers.items():
        validate_server(name, entry, strict=strict)
    return Config(servers=servers, path=path)
'''

FUNC_B = '''def render_table(rows, *, width=80):
    """Format search results as an aligned text table for the terminal."""
    header = ["rank", "source", "location", "score"]
    widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(4)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths))]
    for row in rows:
        lines.append("  ".join(str(c).ljust(w) for c, w in zip(row, widths)))
    return "\\n".join(line[:width] for line in lines)
'''
