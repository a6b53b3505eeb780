"""Serialising a Config back to readable YAML.

Only settings that differ from the schema's defaults are written (a server is its
command and args, not thirty lines of defaults), except the rule fields that make a
rule readable (name, pattern, servers). ``${VAR}`` references are written exactly as
they are held: the Config never contains expanded values. Comments of a hand-written
file are not preserved (PyYAML does not keep them); the header says where the
documented defaults live. ``parse_config(config_to_yaml(c)) == c`` holds for every
valid config; :func:`tributary.engine.config.save.save_config` checks it before writing.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import yaml

from tributary.engine.config.schema import Config, RoutingRule, ServerConfig

HEADER = (
    "# Tributary configuration, written by Tributary. Settings left out take their\n"
    "# defaults (the commented default config lists them). ${VAR} values are expanded\n"
    "# from the environment when a server starts; secrets belong there, not here.\n"
)

_ALWAYS = {RoutingRule: ("name", "pattern", "servers")}
_NEVER = {ServerConfig: ("name",), Config: ("path",)}


def _default_of(field: dataclasses.Field[Any]) -> Any:
    if field.default is not dataclasses.MISSING:
        return field.default
    if field.default_factory is not dataclasses.MISSING:
        return field.default_factory()
    return dataclasses.MISSING


def _dump_value(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _dump_dataclass(value)
    if isinstance(value, dict):
        return {str(k): _dump_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_dump_value(v) for v in value]
    return value


def _dump_dataclass(obj: Any) -> dict[str, Any]:
    cls = type(obj)
    always = _ALWAYS.get(cls, ())
    never = _NEVER.get(cls, ())
    out: dict[str, Any] = {}
    for field in dataclasses.fields(obj):
        if field.name in never:
            continue
        value = getattr(obj, field.name)
        if field.name not in always and value == _default_of(field):
            continue
        dumped = _dump_value(value)
        if dumped == {} and dataclasses.is_dataclass(value) and field.name not in always:
            continue  # a nested section equal to its defaults
        out[field.name] = dumped
    return out


def config_to_dict(config: Config) -> dict[str, Any]:
    """Plain data (dicts, lists, scalars) holding only the non-default settings."""
    return _dump_dataclass(config)


def config_to_yaml(config: Config) -> str:
    """The YAML text of ``config`` (non-default settings, in schema order)."""
    data = config_to_dict(config)
    body = yaml.dump(
        data,
        Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper),
        sort_keys=False,
        default_flow_style=False,
        allow_unicode=True,
        width=100,
    ) if data else "{}\n"
    return HEADER + "\n" + body
