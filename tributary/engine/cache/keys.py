"""Cache keys, config fingerprints and invalidation tags.

Keys are hashes of everything that changes an answer, never the raw inputs:

* query level — ``q:`` + hash(normalised query, every answer-changing request option,
  the config's fingerprint);
* source level — ``s:`` + hash(server name, tool, arguments, the server's fingerprint);

both also hold the engine's code (its release and a digest of its sources).

Fingerprints hash the config *as written* — ``${VAR}`` references, not their values —
so a secret never feeds a hash and rotating a token does not empty the cache. Pass
configs and tool arguments here before ``${VAR}`` expansion.

Tags name what an entry depends on: ``server:NAME`` (dropped when that server's config
changes) and ``repo:/abs/path`` (dropped when an indexed repository changes).
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from tributary.engine.cache.codec import to_jsonable
from tributary.engine.config.schema import Config, ServerConfig
from tributary.engine.model import SearchRequest, SearchResponse, SourceStatus
from tributary.engine.version import code_identity

KEY_VERSION = 3  # bump when the recipe below, the tags or what is cached change, so old entries stop matching
# Keys also hold the engine's code (``code_identity``: the release and its sources): an
# upgrade or an edit ranks, fuses and assembles differently, and the answers older code
# cached would be served for a whole TTL after it.
# (2: built-in servers' answers carry INDEXES_TAG; entries of 1 lack it and could not be dropped)
QUERY_PREFIX = "q:"
SOURCE_PREFIX = "s:"

# Request fields that do not change the answer.
_REQUEST_IGNORED = frozenset({"request_id", "use_cache"})
# Config sections that do not change any answer (the cache's own settings, file location).
_CONFIG_IGNORED = frozenset({"cache", "path"})
# Server settings that change what the server itself returns for a call.
_SERVER_ANSWER_FIELDS = (
    "transport",
    "command",
    "args",
    "env",
    "cwd",
    "url",
    "headers",
    "tool",
    "query_argument",
    "top_k_argument",
    "arguments",
    "builtin",
)

_SPACES = re.compile(r"[^\S\n]+")  # whitespace but line breaks


def digest(data: Any) -> str:
    """A 128-bit hex hash of ``data``'s canonical JSON."""
    text = json.dumps(to_jsonable(data), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def normalise_query(query: str) -> str:
    """Unicode NFC, each line's spaces collapsed, ends trimmed. Case and line breaks are
    kept: both can change the answer (an issue is read by its lines: its title, code
    blocks and traceback)."""
    lines = unicodedata.normalize("NFC", query).replace("\r\n", "\n").split("\n")
    return "\n".join(_SPACES.sub(" ", line).strip() for line in lines).strip()


def config_fingerprint(config: Config) -> str:
    """Hash of every config setting that can change a search's answer."""
    data = to_jsonable(config)
    return digest({k: v for k, v in data.items() if k not in _CONFIG_IGNORED})


def server_fingerprint(server: ServerConfig) -> str:
    """Hash of the settings that change what ``server`` answers (not weight, health…)."""
    return digest({name: getattr(server, name) for name in _SERVER_ANSWER_FIELDS})


def request_signature(request: SearchRequest) -> dict[str, Any]:
    """The parts of ``request`` that change the answer, query normalised."""
    data = to_jsonable(request)
    signature = {k: v for k, v in data.items() if k not in _REQUEST_IGNORED}
    signature["query"] = normalise_query(request.query)
    return signature


def query_key(request: SearchRequest, config_fp: str) -> str:
    return QUERY_PREFIX + digest(
        {"v": KEY_VERSION, "release": code_identity(), "request": request_signature(request), "config": config_fp}
    )


def source_key(server: ServerConfig, tool: str, arguments: Mapping[str, Any]) -> str:
    return SOURCE_PREFIX + digest(
        {
            "v": KEY_VERSION,
            "release": code_identity(),
            "server": server.name,
            "fp": server_fingerprint(server),
            "tool": tool,
            "arguments": dict(arguments),
        }
    )


def server_tag(name: str) -> str:
    return f"server:{name}"


def repo_tag(path: str | Path) -> str:
    """The tag for an indexed repository; the same for any spelling of its path."""
    return f"repo:{Path(path).expanduser().resolve()}"


# Every answer of a built-in server: it searches every indexed repository, listed in the
# config or not (``tributary index add`` lists none), so a change to any of them may
# change any of its answers.
INDEXES_TAG = "indexes"


def source_tags(server: ServerConfig, config: Config | None = None) -> list[str]:
    """Tags for what ``server``'s answers depend on: itself, and for a built-in server
    the indexed repositories it serves (``INDEXES_TAG``, and the config's repositories)."""
    tags = [server_tag(server.name)]
    if server.builtin:
        tags.append(INDEXES_TAG)
        if config is not None:
            tags.extend(repo_tag(repo.path) for repo in config.repos)
    return tags


def response_tags(response: SearchResponse, config: Config) -> list[str]:
    """Tags for a whole response: every source that was asked, and what it depends on."""
    tags: dict[str, None] = {}
    for report in response.sources:
        if report.status is SourceStatus.SKIPPED:
            continue
        server = config.servers.get(report.name)
        names: Iterable[str]
        if server is not None:
            names = source_tags(server, config)
        else:
            # Not in this config (e.g. a built-in server added at run time): it may
            # draw on any indexed repository, so a change to any of them drops it.
            names = [server_tag(report.name), INDEXES_TAG, *(repo_tag(r.path) for r in config.repos)]
        tags.update(dict.fromkeys(names))
    return list(tags)
