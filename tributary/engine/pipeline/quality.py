"""Source quality for web-like hits: domain authority, recency, content depth.

``url_quality`` = 0.4 × domain authority + 0.3 × recency + 0.3 × depth, each from the
tier tables below. The fusion strategies use it as a hit-level reputation signal for
hits with an http(s) uri, and ``recency_score`` as the freshness signal of every hit.
"""

from __future__ import annotations

from datetime import UTC, datetime
from urllib.parse import urlsplit

WEIGHT_DOMAIN = 0.4
WEIGHT_RECENCY = 0.3
WEIGHT_DEPTH = 0.3
UNKNOWN_DOMAIN = 0.40
UNDATED_RECENCY = 0.6  # the "6-12 months" middle ground for undated content

_TLD_SCORES = {".gov": 0.90, ".edu": 0.90, ".mil": 0.90, ".int": 0.90}
_PUBLICATIONS = {
    "arxiv.org": 0.85, "acm.org": 0.85, "dl.acm.org": 0.85, "ieee.org": 0.85, "ieeexplore.ieee.org": 0.85,
    "nature.com": 0.85, "science.org": 0.85, "springer.com": 0.85, "usenix.org": 0.85,
}
_OFFICIAL_DOCS = {
    "docs.python.org": 0.85, "python.org": 0.85, "go.dev": 0.85, "pkg.go.dev": 0.85,
    "developer.mozilla.org": 0.85, "doc.rust-lang.org": 0.85, "docs.rs": 0.80,
    "learn.microsoft.com": 0.80, "docs.oracle.com": 0.80, "nodejs.org": 0.80,
    "readthedocs.io": 0.80, "readthedocs.org": 0.80, "kernel.org": 0.80,
    "postgresql.org": 0.80, "sqlite.org": 0.80, "pypi.org": 0.80, "npmjs.com": 0.75,
}
_TECH_BLOGS = {
    "martinfowler.com": 0.75, "github.blog": 0.70, "engineering.fb.com": 0.70,
    "netflixtechblog.com": 0.70, "blog.cloudflare.com": 0.70, "aws.amazon.com": 0.70,
    "github.com": 0.70, "gitlab.com": 0.65,
}
_COMMUNITY = {
    "stackoverflow.com": 0.65, "stackexchange.com": 0.60, "superuser.com": 0.60,
    "medium.com": 0.50, "dev.to": 0.50, "reddit.com": 0.50, "news.ycombinator.com": 0.55,
}
_TIERS = (_PUBLICATIONS, _OFFICIAL_DOCS, _TECH_BLOGS, _COMMUNITY)


def is_web_uri(uri: str | None) -> bool:
    return bool(uri) and urlsplit(uri or "").scheme in ("http", "https")


def domain_authority(uri: str) -> float:
    """The domain tier of a URL (0.40 when unknown)."""
    host = (urlsplit(uri).hostname or "").lower().removeprefix("www.")
    for tld, score in _TLD_SCORES.items():
        if host.endswith(tld):
            return score
    labels = host.split(".")
    suffixes = [".".join(labels[i:]) for i in range(len(labels) - 1)]  # docs.foo.readthedocs.io matches readthedocs.io
    for table in _TIERS:
        for suffix in suffixes:
            found = table.get(suffix)
            if found is not None:
                return found
    return UNKNOWN_DOMAIN


def recency_score(timestamp: datetime | None, now: datetime) -> float:
    """1.0 within 3 months, 0.8 within 6, 0.6 within 12, else 0.4; undated 0.6."""
    if timestamp is None:
        return UNDATED_RECENCY
    if timestamp.tzinfo is None:
        timestamp = timestamp.replace(tzinfo=UTC)
    days = (now - timestamp).total_seconds() / 86400.0
    if days <= 91:
        return 1.0
    if days <= 182:
        return 0.8
    if days <= 365:
        return 0.6
    return 0.4


def depth_score(text: str) -> float:
    """0.8 above 2,000 words, 0.6 from 500, else 0.4."""
    words = text.count(" ") + text.count("\n") + 1 if text else 0
    if words > 2000:
        return 0.8
    if words >= 500:
        return 0.6
    return 0.4


def url_quality(uri: str, content: str, timestamp: datetime | None, now: datetime) -> float:
    """The quality score of one web source, 0..1."""
    return (
        WEIGHT_DOMAIN * domain_authority(uri)
        + WEIGHT_RECENCY * recency_score(timestamp, now)
        + WEIGHT_DEPTH * depth_score(content)
    )
