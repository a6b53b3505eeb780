"""Secrets a repository's files may hold, kept out of the index and out of answers.

Everything indexed can reach an LLM client's context, so a credentials file left in the
tree (``.env``, ``.netrc``, an SSH key with no suffix) is never indexed or read, and a
private key written into an indexed file (a test's PEM string, a config sample) has its
body replaced, line for line, so the file's other lines keep their numbers. Templates
of such files (``.env.example``) hold no secret and stay.
"""

from __future__ import annotations

import re

from tributary.engine.index.decoding import decode_source

# Files that exist to hold a secret, by exact name (compared case-folded).
CREDENTIAL_NAMES = frozenset({
    ".env", ".netrc", "_netrc", ".pgpass", ".pypirc", ".git-credentials", ".htpasswd",
    "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "id_ecdsa_sk", "id_ed25519_sk",
})
# ``.env.production`` holds secrets; ``.env.example`` shows their names.
_ENV_TEMPLATES = frozenset({"example", "sample", "template", "dist", "defaults", "default", "schema", "tpl"})

# A PEM private key's armour; bounded, so the search stays linear in the text's length.
_KEY_BEGIN = re.compile(r"-----BEGIN ([A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?)-----")
_KEY_BODY = re.compile(r"[A-Za-z0-9+/=]{16,}")
MAX_KEY_CHARS = 20_000  # a key longer than any real one is not looked for past this
REDACTED = "REDACTED"


def is_credentials_file(name: str) -> bool:
    """Whether a file called ``name`` exists to hold a secret (``.env.local``: yes;
    ``.env.example``: no)."""
    folded = name.casefold()
    if folded in CREDENTIAL_NAMES:
        return True
    if folded.startswith(".env."):
        return folded.rsplit(".", 1)[-1] not in _ENV_TEMPLATES
    return False


def without_private_keys(text: str) -> str:
    """``text`` with the body of each PEM private key replaced by ``REDACTED``, its
    armour lines, quotes and line breaks kept (the lines keep their numbers)."""
    if "PRIVATE KEY" not in text:
        return text
    out: list[str] = []
    done = 0
    for begin in _KEY_BEGIN.finditer(text):
        if begin.start() < done:
            continue
        end = text.find(f"-----END {begin.group(1)}-----", begin.end(), begin.end() + MAX_KEY_CHARS)
        stop = end if end >= 0 else min(len(text), begin.end() + MAX_KEY_CHARS)
        out.append(text[done : begin.end()])
        out.append(_KEY_BODY.sub(REDACTED, text[begin.end() : stop]))
        done = stop
    out.append(text[done:])
    return "".join(out)


def source_text(data: bytes) -> str:
    """A source file's bytes as text the index and ``get_file`` may hold: decoded
    (``decode_source``, which raises ``UndecodableError``), private keys redacted. Both
    read through here, so neither can show what the other hides."""
    return without_private_keys(decode_source(data).text)
