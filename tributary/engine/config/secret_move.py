"""Moving literal secrets out of the config into the OS keyring.

The config keeps ``${keyring:NAME}`` references; the values go to the keyring
*before* the config is saved, so a failed save loses nothing. Used by
``tributary secrets move``, the editor's "Move secrets to keyring" button and
``tributary config import`` (a client's file often holds tokens in plain text).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from tributary.engine.config import keystore
from tributary.engine.config.expand import references, server_strings
from tributary.engine.config.importer import secrets_to_keyring_refs
from tributary.engine.config.schema import Config, ServerConfig


@dataclass(slots=True)
class MoveResult:
    config: Config
    names: list[str] = field(default_factory=list)  # keyring entries written
    places: list[tuple[str, str]] = field(default_factory=list)  # (servers.X.env.K, NAME), args[i], url
    saved: Path | None = None


def move_server_secrets(servers: Iterable[ServerConfig], *, store: bool = True,
                        ) -> tuple[list[ServerConfig], list[tuple[str, str]], list[str]]:
    """``servers`` with literal secrets replaced by keyring references, where each went,
    and the names stored (written to the keyring unless ``store`` is False)."""
    originals = list(servers)
    converted, values = secrets_to_keyring_refs(originals, keystore.get_secret)
    places: list[tuple[str, str]] = []
    for before, after in zip(originals, converted, strict=True):
        old_strings = dict(server_strings(before))
        for key, value in server_strings(after):
            if value != old_strings.get(key):
                was = {ref.name for ref in references(old_strings.get(key) or "") if ref.keyring}
                places += [(f"servers.{before.name}.{key}", ref.name)
                           for ref in references(value) if ref.keyring and ref.name not in was]
    if store:
        for name, value in values.items():
            keystore.set_secret(name, value)
    return converted, places, sorted(values)


def move_imported_secrets(servers: Iterable[ServerConfig], *, store: bool = True,
                          ) -> tuple[list[ServerConfig], str | None]:
    """Imported ``servers`` with their literal secrets (copied from another client's file)
    moved to the secret store before they reach the config, and the line for the import
    report: the keys moved and where they are kept, never the values (None when there
    were none). With ``store`` False nothing is written and the line says "would move"."""
    converted, _places, names = move_server_secrets(servers, store=store)
    if not names:
        return converted, None
    count = f"{len(names)} secret{'s' if len(names) != 1 else ''}"
    verb = "moved" if store else "would move"
    return converted, (f"{verb} {count} to the keyring: {', '.join(names)}; kept "
                       f"{keystore.storage_text()}")


def move_secrets_to_keyring(config: Config, only: Iterable[str] | None = None, *,
                            dry_run: bool = False) -> MoveResult:
    """Store ``config``'s literal secrets (of the servers ``only`` names, default all) in
    the keyring and save the config with references instead (nothing written on a dry run)."""
    from tributary.engine.config.save import save_config

    chosen = set(only) if only is not None else set(config.servers)
    picked = [s for n, s in config.servers.items() if n in chosen and not s.builtin]
    converted, places, names = move_server_secrets(picked, store=not dry_run)
    updated = copy.deepcopy(config)
    for server in converted:
        updated.servers[server.name] = server
    result = MoveResult(updated, names, places)
    if names and not dry_run:
        result.saved = save_config(updated, config.path)
        _scrub_backup(result.saved, {n: keystore.get_secret(n) or "" for n in names})
    return result


def _scrub_backup(saved: Path, moved: dict[str, str]) -> None:
    """The backup that saving made still holds the literals: put the references there
    too, or, if a value is still found (written escaped), remove the backup."""
    from tributary.engine.config.save import backup_path, write_atomic

    backup = backup_path(saved)
    try:
        text = backup.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return
    for name, value in sorted(moved.items(), key=lambda item: -len(item[1])):
        if value:
            text = text.replace(value, "${keyring:" + name + "}")
    if any(value and value in text for value in moved.values()):
        backup.unlink(missing_ok=True)
    else:
        write_atomic(backup, text.encode("utf-8"), backup=False)
