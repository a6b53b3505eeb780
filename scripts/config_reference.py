"""Write docs/configuration.md, the configuration reference, from tributary/engine/config/schema.py.

    .venv/bin/python scripts/config_reference.py           # rewrite the file
    .venv/bin/python scripts/config_reference.py --check   # exit 1 if it is out of date

Every key, its type and its default come from the schema's dataclasses, so the
reference cannot drift from the code; what a key means comes from ``DESCRIPTIONS``
below, else from the comment beside the field in schema.py. A test runs ``--check``.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import io
import sys
import tokenize
import types
import typing
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tributary.engine.config import schema  # noqa: E402
from tributary.engine.model import CONTEXT_FORMATS, FUSION_STRATEGIES, OVERFLOW_STRATEGIES  # noqa: E402

OUT = ROOT / "docs" / "configuration.md"
SCHEMA = ROOT / "tributary" / "engine" / "config" / "schema.py"

# (YAML path, dataclass, what the section is for). A path ending in ".<name>" is a
# mapping keyed by name; "[]" a list of items.
SECTIONS: list[tuple[str, type, str]] = [
    ("servers.<name>", schema.ServerConfig,
     "One MCP server to ask. The key is its name. `command` starts a stdio server; `url` "
     "(without `command`) connects to a streamable HTTP one (`transport: sse` for the "
     "older HTTP+SSE transport). Values in `env` and `headers` may be `${VAR}` references, "
     "expanded from the environment when the server starts, or `${keyring:NAME}` ones, "
     "read from the OS keyring (also allowed in `args` and `url`); both are masked "
     "wherever they are shown."),
    ("servers.<name>.health", schema.HealthConfig,
     "Health checks and the circuit breaker of one server."),
    ("routing", schema.RoutingConfig,
     "Which servers answer a query. Rules are tried in priority order; in `first` mode "
     "the first rule that matches decides, in `all` mode every matching rule adds its "
     "servers. No match: the `fallback` servers."),
    ("routing.rules[]", schema.RoutingRule,
     "One routing rule: a case-insensitive regular expression over the query and the "
     "servers it selects. Patterns that could backtrack catastrophically are refused."),
    ("fusion", schema.FusionConfig, "How the sources' ranked lists become one."),
    ("fusion.composite", schema.CompositeWeights,
     "Weights of the `composite` strategy's four signals (each 0..1)."),
    ("dedup", schema.DedupConfig, "Folding duplicates and near-duplicates across sources."),
    ("budget", schema.BudgetConfig, "The assembled context's token budget and format."),
    ("cache", schema.CacheConfig,
     "Cached answers per source. `sqlite` and `redis` are shared by every Tributary "
     "process; `memory` is private to one."),
    ("index", schema.IndexConfig,
     "Where the repository indexes live: one SQLite file per repository on this machine "
     "(`sqlite`), or one PostgreSQL + pgvector database a team shares (`postgres`; see "
     "docs/postgres.md)."),
    ("cli", schema.CliConfig,
     "How `tributary search` and `tributary context` answer when neither the desktop app "
     "nor `tributary serve` runs: the first starts an engine in the background (`tributary "
     "engine`), which answers the next ones with its servers already started."),
    ("repos[]", schema.RepoConfig,
     "A local repository served by the built-in `files` (code) and `tasks` (history) "
     "servers. `tributary index add PATH` and the app's Indexes page write these."),
]

DESCRIPTIONS: dict[str, str] = {
    "ServerConfig.name": "The server's name (the key under `servers`).",
    "ServerConfig.transport": ("`stdio`, `http` (streamable HTTP) or `sse` (the older HTTP+SSE "
                               "transport); `stdio` or `http` is inferred from `command` / `url` "
                               "when left out."),
    "ServerConfig.command": "Program to start (stdio).",
    "ServerConfig.args": "Its arguments.",
    "ServerConfig.env": "Extra environment for it; `${VAR}` references are expanded at start.",
    "ServerConfig.cwd": "Its working directory.",
    "ServerConfig.url": "The server's endpoint (http, sse).",
    "ServerConfig.headers": "HTTP headers, e.g. `Authorization: \"Bearer ${TOKEN}\"`.",
    "ServerConfig.timeout": "Seconds one query may take before the source is reported as timed out.",
    "ServerConfig.weight": "Source weight for the `weighted` strategy.",
    "ServerConfig.enabled": "`false` keeps the entry but never asks the server.",
    "ServerConfig.tool": ("Which tool answers queries. When left out, only a search tool its "
                          "server marks `readOnlyHint: true` is chosen, and a server none of whose "
                          "tools takes a query is not asked; set it to use any other, except a tool its "
                          "server marks destructive or `readOnlyHint: false` or whose name says it writes: "
                          "that one is never sent a search. A named tool that takes "
                          "no query (or whose only required argument is a path or a key, given "
                          "under `arguments`) is called the same way for every search, so its "
                          "items rank after the answers of the sources that were sent the question."),
    "ServerConfig.query_argument": "The tool's argument that receives the query; auto-detected.",
    "ServerConfig.top_k_argument": "The tool's argument that receives the result count, if any.",
    "ServerConfig.arguments": ("Fixed extra arguments sent with every call; they win over the "
                               "automatic result count (which stays within the tool's "
                               "minimum and maximum). The server form's *Tool arguments* field "
                               "takes them on one line: `{path: /srv/docs, limit: 20}`."),
    "ServerConfig.query_mode": (
        "`full` sends the whole question; `keywords` asks a tool that matches its query as "
        "one substring, such as server-memory's `search_nodes`, once for each of the question's "
        "three longest content words (none inside another already asked: `sendfile`, not also "
        "`send`), side by side, and ranks what they found by the words each item holds (set on "
        "import, by `servers add` and in the app's form); `glob` sends a pattern "
        "for file names holding any of those words (`**/*{routing,rules}*`; a name with "
        "its dot stays whole), for a file-name search such as server-filesystem's "
        "`search_files`, whose files are then ranked by the words their names hold and count in fusion for a quarter of what a match of their contents would; `pattern` sends a regular expression for any of its names, an "
        "issue's code names first (`get_help_record|show_default|PosixPath`), for a grep "
        "tool such as mcp-ripgrep's `search` (a one-line query already written as an "
        "expression goes as it is, unless it reads as a sentence of four or more plain "
        "words); its files are then ranked by the names they hold, since grep "
        "lists them in the order it finds them. The tool's own switches for it are set "
        "unless `arguments` fixes them (`regex: true`, `case_sensitive: false` and their "
        "other spellings), and its limit is asked for ten lines per file wanted, since "
        "a grep tool counts lines and its answer is read as one hit per file "
        "(code-index-mcp's `search_code_advanced`). Left at `full`, a tool whose query "
        "argument, or the tool itself, says it takes a regular expression is sent `pattern`."),
    "ServerConfig.health": "See `servers.<name>.health`.",
    "ServerConfig.builtin": "`files` or `tasks` for Tributary's own servers (set by Tributary).",
    "ServerConfig.description": "Free text shown in the app.",
    "ServerConfig.expose": (
        "Tools of this server that `tributary serve` offers its own clients, each as "
        "`<server>__<tool>` with the upstream's description, schema and annotations "
        "(docs/http-serving.md). Exposing a tool that writes or deletes lets the LLM "
        "client call it."),
    "ServerConfig.auth": ("OAuth sign-in (`tributary servers login NAME`): `auto` uses it when the "
                          "server asks and no `Authorization` header is configured; `oauth` "
                          "always; `none` never."),
    "HealthConfig.interval_s": "Seconds between health checks while no query asks the server.",
    "HealthConfig.failure_threshold": "Failures in a row that open the circuit breaker.",
    "HealthConfig.open_s": "Seconds the breaker stays open before the server is tried again; doubled after each failed try, up to 16 times.",
    "HealthConfig.restart_unresponsive": (
        "Kill and restart (HTTP: reconnect) a running server that stays silent through "
        "`failure_threshold` requests and one more ping. `false` leaves it running, e.g. "
        "while debugging it."),
    "RoutingConfig.mode": "`first`: the first matching rule decides; `all`: union of every matching rule.",
    "RoutingConfig.rules": "See `routing.rules[]`.",
    "RoutingConfig.fallback": "Servers for queries no rule matches; unset: every enabled server.",
    "RoutingRule.name": "The rule's name (shown in every response's routing decision).",
    "RoutingRule.pattern": "Case-insensitive regular expression searched in the query.",
    "RoutingRule.servers": "Servers the rule selects.",
    "RoutingRule.priority": "Higher is tried first; equal priorities keep their order in the file.",
    "RoutingRule.weights": "Per-source weights applied when this rule matched.",
    "RoutingRule.strategy": "Fusion strategy used when this rule matched.",
    "RoutingRule.query_class": (
        "Match only queries of this form: `symbol`, `howto` or `conceptual` (every response names its query's class)."),
    "RoutingRule.enabled": "`false` keeps the rule but never applies it.",
    "FusionConfig.strategy": "One of " + ", ".join(f"`{s}`" for s in FUSION_STRATEGIES) + ".",
    "FusionConfig.rrf_k": "The k of reciprocal rank fusion, 1 / (k + rank); read by the `rrf` and `vote` strategies.",
    "FusionConfig.top_k": "Results returned, clamped to 10..100.",
    "FusionConfig.composite": "See `fusion.composite`.",
    "CompositeWeights.keyword": "Share of the query's terms found in the hit.",
    "CompositeWeights.freshness": "Recency of the hit's timestamp.",
    "CompositeWeights.reputation": "The source's reputation learnt from feedback.",
    "CompositeWeights.length": "Preference for hits near an ideal length.",
    "DedupConfig.enabled": "Fold duplicates at all.",
    "DedupConfig.fuzzy_threshold": "Edit-distance similarity (0..1) above which two hits are one.",
    "DedupConfig.semantic": "Also compare embeddings (the packaged MiniLM model).",
    "DedupConfig.semantic_threshold": "Cosine similarity above which two hits are one.",
    "DedupConfig.merge_overlaps": "Merge overlapping chunks of the same file into one.",
    "BudgetConfig.max_tokens": "Tokens the assembled context may hold.",
    "BudgetConfig.reserved_tokens": "Of those, tokens kept free (for the prompt around it).",
    "BudgetConfig.overflow": (
        "What happens to a hit that does not fit: "
        + ", ".join(f"`{s}`" for s in OVERFLOW_STRATEGIES) + "."),
    "BudgetConfig.format": "Context format: " + ", ".join(f"`{s}`" for s in CONTEXT_FORMATS) + ".",
    "CacheConfig.backend": "`sqlite`, `redis`, `memory` or `off`.",
    "CacheConfig.ttl_s": "Seconds a cached answer is reused.",
    "CacheConfig.redis_url": "Redis server for the `redis` backend.",
    "CacheConfig.max_entries": "Most answers kept; the oldest go first.",
    "CacheConfig.max_mb": "Largest size of the `sqlite` cache file in MB; past it the oldest answers go and the space is returned.",
    "IndexConfig.backend": "`sqlite` (default) or `postgres`.",
    "IndexConfig.dsn": "postgres: the database's DSN, e.g. `postgresql://tributary:${PGPASSWORD}@db/tributary`; "
                       "`${VAR}` references are expanded when it is used, and a password written here is masked "
                       "by `config show`.",
    "IndexConfig.vector_index": "postgres: the vector index, `hnsw`, `ivfflat` or `exact` (a full scan); "
                                "`auto` takes the best the server has.",
    "RepoConfig.path": "The repository's folder.",
    "RepoConfig.name": "Its name in results; the folder's name when left out.",
    "RepoConfig.include": "Gitignore-style patterns of the files to index (empty: every text file not ignored).",
    "RepoConfig.exclude": "Gitignore-style patterns to leave out, on top of `.gitignore`.",
    "RepoConfig.watch": "Keep the index up to date as files change while the app runs.",
    "RepoConfig.tasks": "JSONL task-history files to import (issues from a tracker's export).",
}

ENVIRONMENT: list[tuple[str, str]] = [
    ("TRIBUTARY_CONFIG", "The config file to use (as `--config FILE`)."),
    ("TRIBUTARY_HOME", "One folder for config and data (indexes, cache, history)."),
    ("TRIBUTARY_TOKEN", "Bearer token `tributary serve --http` requires (needed to bind beyond loopback)."),
    ("TRIBUTARY_EDITOR", "The editor the app's *Open in editor* runs."),
    ("TRIBUTARY_BACKGROUND_MINUTES", ("Minutes the background engine that `search` and `context` "
                                      "start stays up unused, instead of `cli.background_minutes` "
                                      "(0: start none).")),
    ("TRIBUTARY_CONFIG_SETTLE_S", ("Seconds `search` and `context` wait for an invalid config "
                                   "file changed that recently to be written completely "
                                   "(default 2; 0: report it at once).")),
    ("TRIBUTARY_EMBED_BACKEND", "`onnx` (default) or `torch`."),
    ("TRIBUTARY_EMBED_PRECISION", "`fp32` or `bf16` for the PyTorch backend (default: detected from the CPU)."),
    ("TRIBUTARY_EMBED_THREADS", "Worker threads for large encodes (default: one per core)."),
    ("TRIBUTARY_EMBED_SEQ", "Sequence length of code chunks' embeddings, 16..256 (for experiments)."),
    ("TRIBUTARY_MODEL_CACHE", "Where the int8 ONNX model is kept (default: the user cache dir)."),
    ("TRIBUTARY_INDEX_DSN", "The shared PostgreSQL index's DSN, for the built-in servers' `--postgres`."),
    ("TRIBUTARY_PURE_PYTHON", "`1`: run the pipeline as Python even where it was compiled."),
]


def field_comments(source: str) -> dict[str, str]:
    """``Class.field`` -> the comment beside the field, or the comment lines just above it."""
    comments: dict[int, str] = {}
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            comments[token.start[0]] = token.string.lstrip("#").strip()
    lines = source.splitlines()
    out: dict[str, str] = {}
    for node in ast.parse(source).body:
        if not isinstance(node, ast.ClassDef):
            continue
        for item in node.body:
            if not (isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)):
                continue
            row = item.lineno
            text = comments.get(row, "")
            if not text:
                above: list[str] = []
                line = row - 1
                while line in comments and lines[line - 1].lstrip().startswith("#"):
                    above.insert(0, comments[line])
                    line -= 1
                text = " ".join(above)
            if text:
                out[f"{node.name}.{item.target.id}"] = text
    return out


def type_name(hint: Any) -> str:
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin is typing.Literal:
        return " \\| ".join(f"`{a}`" for a in args)
    if origin in (typing.Union, types.UnionType):
        return " \\| ".join(type_name(a) for a in args if a is not type(None)) + " (optional)"
    if origin is list:
        return f"list of {type_name(args[0])}"
    if origin is dict:
        return f"mapping of {type_name(args[0])} to {type_name(args[1])}"
    if dataclasses.is_dataclass(hint):
        return "entry"
    if hint is Any:
        return "any"
    return {str: "text", int: "integer", float: "number", bool: "true/false"}.get(hint, str(hint))


def default_text(spec: dataclasses.Field[Any]) -> str:
    if spec.default is not dataclasses.MISSING:
        value = spec.default
    elif spec.default_factory is not dataclasses.MISSING:
        value = spec.default_factory()
        if dataclasses.is_dataclass(value):
            return "(see below)"
    else:
        return "*required*"
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if value in ([], {}, ""):
        return "empty"
    return f"`{value}`"


def section(path: str, cls: type, about: str, comments: dict[str, str]) -> list[str]:
    hints = typing.get_type_hints(cls)
    rows = [f"## `{path}`", "", about, "", "| key | type | default | meaning |", "|---|---|---|---|"]
    for spec in dataclasses.fields(cls):
        if spec.name == "name" and cls is schema.ServerConfig:
            continue  # the mapping's key
        key = f"{cls.__name__}.{spec.name}"
        meaning = DESCRIPTIONS.get(key) or comments.get(key, "")
        rows.append(
            f"| `{spec.name}` | {type_name(hints[spec.name])} | {default_text(spec)} | {meaning} |"
        )
    return [*rows, ""]


def render() -> str:
    comments = field_comments(SCHEMA.read_text(encoding="utf-8"))
    parts = [
        "# Configuration reference",
        "",
        "<!-- Generated by scripts/config_reference.py from tributary/engine/config/schema.py; "
        "do not edit by hand. -->",
        "",
        "Tributary reads one YAML file. `tributary config path` prints where it is (the "
        "platform's config folder; `--config FILE` or `TRIBUTARY_CONFIG` choose another, "
        "`TRIBUTARY_HOME` moves config and data together). `tributary config validate` "
        "checks it and names the file, line and key of every problem; `tributary config "
        "import FILE` takes the `mcpServers` of a Claude Desktop, Cursor or VS Code config. "
        "Saving, from the app or `config import`, validates first, writes atomically and "
        "keeps `config.yaml.bak`.",
        "",
        "A key left out takes its default below; keys marked *required* must be given. "
        "Top-level sections: "
        + ", ".join(f"`{f.name}`" for f in dataclasses.fields(schema.Config) if f.name != "path")
        + ".",
        "",
    ]
    for path, cls, about in SECTIONS:
        parts += section(path, cls, about, comments)
    parts += ["## Environment variables", "", "| variable | effect |", "|---|---|"]
    parts += [f"| `{name}` | {effect} |" for name, effect in ENVIRONMENT]
    return "\n".join(parts) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the file is out of date")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        current = OUT.read_text(encoding="utf-8") if OUT.exists() else ""
        if current != text:
            print(f"{OUT.relative_to(ROOT)} is out of date: run scripts/config_reference.py",
                  file=sys.stderr)
            return 1
        return 0
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
