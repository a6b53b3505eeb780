"""What a tool's name says it does: a search, or a write.

Read by the import of a client's config (``tributary.engine.config.clients``), which
names the tool a Codex server leaves enabled, and by the source that picks a server's
search tool (``tributary.engine.sources.tools``): here in the config package, which the
sources already build on, so the config never imports the sources.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

SEARCH_WORDS = ("search", "query", "find", "lookup", "retrieve", "grep", "ask")
# Verbs that change something: a tool named with one is never called with a search's text.
# (Words that are as often nouns — post, commit, index, store, archive — are left out.)
# Verbs that start something running count too: desktop-commander's ``start_search``
# answers with a session id and leaves a search running in the server for every query.
WRITE_WORDS = frozenset((
    "write", "delete", "del", "remove", "rm", "drop", "create", "update", "upsert", "insert",
    "put", "set", "add", "edit", "modify", "patch", "send", "exec", "execute", "run", "kill",
    "move", "rename", "upload", "push", "reset", "clear", "truncate", "destroy", "purge",
    "apply", "replace", "append", "save", "reindex", "alter", "grant", "revoke", "close",
    "cancel", "approve", "publish", "erase", "wipe", "overwrite", "nuke", "flush", "prune",
    "unlink", "shred", "evict", "expunge", "discard", "terminate", "restart", "stop",
    "shutdown", "deploy", "merge", "revert", "rollback", "disable", "enable", "import",
    "invoke", "call", "trigger", "submit", "post", "transfer", "pay", "format", "wipeout",
    "start", "launch", "spawn", "schedule", "enqueue",
))


def tool_words(name: str) -> list[str]:
    """A name's lower-case words, split at case changes and non-letters."""
    return [w for w in re.split(r"[^a-z]+", re.sub(r"([a-z])([A-Z])", r"\1_\2", name).lower()) if w]


def looks_like_search(name: str) -> bool:
    """Whether a tool's name reads as a search (a word starting search, query, find …)."""
    return any(w.startswith(s) for w in tool_words(name) for s in SEARCH_WORDS)


def write_verb(name: str) -> str | None:
    """The write verb in a tool's name (``delete_file`` → ``delete``), if any."""
    return write_verb_in(tool_words(name))


def _stems(word: str) -> set[str]:
    """``word`` and what it may be an inflection of: deletes, deleted, deleting → delete."""
    stems = {word}
    for suffix, back in (("s", ""), ("es", ""), ("d", ""), ("ed", ""), ("ing", ""), ("ing", "e")):
        if word.endswith(suffix) and len(word) > len(suffix) + 1:
            stem = word[: -len(suffix)] + back
            stems.add(stem)
            if suffix in ("ed", "ing") and len(stem) > 2 and stem[-1] == stem[-2]:
                stems.add(stem[:-1])  # dropped, dropping → drop
    return stems


def write_verb_in(words: Sequence[str]) -> str | None:
    """The first of ``words`` that is a write verb in any inflection, as its verb."""
    for word in words:
        found = WRITE_WORDS.intersection(_stems(word))
        if found:
            return min(found)
    return None
