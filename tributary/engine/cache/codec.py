"""JSON converters for the engine's data model (``tributary.engine.model``) and any dataclass.

The cache, the query log and the MCP face all need a ``SearchResponse`` or a list
of ``Hit`` as plain JSON and back. Rather than one hand-written converter per class,
:func:`to_jsonable` walks any dataclass/enum/datetime tree, and :func:`from_jsonable`
rebuilds a typed object from the dataclass's own type hints — so a field added to the
model later survives the round trip without touching this file.

Conventions: enums become their value, datetimes ISO 8601 (timezone kept), ``Path`` a
string, bytes base64, sets sorted lists. Unknown keys in the input are ignored and
missing keys take the field's default, so older cached entries still decode.
"""

from __future__ import annotations

import base64
import dataclasses
import types
import typing
from collections.abc import Callable, Iterable, Mapping
from datetime import date, datetime, timedelta
from enum import Enum
from functools import cache
from pathlib import PurePath
from typing import Any, TypeVar, cast

from tributary.engine.errors import TributaryError
from tributary.engine.model import Hit, SearchResponse

T = TypeVar("T")

JSONValue = None | bool | int | float | str | list[Any] | dict[str, Any]


class CodecError(TributaryError, ValueError):
    """The data does not fit the type it is being decoded into."""


def to_jsonable(obj: Any) -> Any:
    """``obj`` as JSON-ready data (dicts, lists, strings, numbers, bools, None)."""
    kind: type = type(obj)
    # Exact-type fast paths first: this runs for every field of every hit.
    if kind in _PLAIN:
        return obj
    names = _field_names(kind)
    if names is not None:
        return {name: to_jsonable(getattr(obj, name)) for name in names}
    if kind is list or kind is tuple:
        return [to_jsonable(v) for v in obj]
    if kind is dict:
        return {
            k if type(k) is str else str(to_jsonable(k)): to_jsonable(v) for k, v in obj.items()
        }
    return _to_jsonable_other(obj)


_PLAIN = frozenset({str, int, float, bool, type(None)})


@cache
def _field_names(kind: type) -> tuple[str, ...] | None:
    if not dataclasses.is_dataclass(kind):
        return None
    return tuple(f.name for f in dataclasses.fields(kind))


def _to_jsonable_other(obj: Any) -> Any:
    if isinstance(obj, Enum):
        return to_jsonable(obj.value)
    if isinstance(obj, str):
        return str(obj)
    if obj is None or isinstance(obj, bool | int | float):
        return obj
    if isinstance(obj, datetime | date):
        return obj.isoformat()
    if isinstance(obj, timedelta):
        return obj.total_seconds()
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: to_jsonable(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, Mapping):
        return {str(to_jsonable(k)): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, set | frozenset):
        items = [to_jsonable(v) for v in obj]
        try:
            return sorted(items)
        except TypeError:  # mixed types: any stable order will do
            return sorted(items, key=repr)
    if isinstance(obj, list | tuple):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, PurePath):
        return str(obj)
    if isinstance(obj, bytes | bytearray | memoryview):
        return base64.b64encode(bytes(obj)).decode("ascii")
    return str(obj)


def from_jsonable(tp: Any, data: Any) -> Any:
    """Rebuild a value of type ``tp`` (a dataclass, enum, ``list[X]``, ``X | None``…)."""
    return _decoder(tp)(data)


def response_from_dict(data: Mapping[str, Any]) -> SearchResponse:
    """A ``SearchResponse`` from :func:`to_jsonable` output.

    Each group's kept hit is made the very object found in ``hits`` (as it was before
    encoding), so the UI can go from a ranked hit to its group by identity too.
    """
    response = cast(SearchResponse, from_jsonable(SearchResponse, data))
    by_id = {hit.id: hit for hit in response.hits}
    for group in response.groups:
        same = by_id.get(group.kept.id)
        if same is not None and same == group.kept:
            group.kept = same
    return response


def hit_from_dict(data: Mapping[str, Any]) -> Hit:
    return cast(Hit, from_jsonable(Hit, data))


def hits_from_list(data: Iterable[Mapping[str, Any]]) -> list[Hit]:
    return [hit_from_dict(item) for item in data]


def hits_to_list(hits: Iterable[Hit]) -> list[dict[str, Any]]:
    return [cast(dict[str, Any], to_jsonable(hit)) for hit in hits]


# --- decoding ---------------------------------------------------------------------

Decoder = Callable[[Any], Any]


@cache
def _decoder(tp: Any) -> Decoder:
    if tp is Any or tp is object:
        return _identity
    if tp is type(None) or tp is None:
        return _expect_none
    origin = typing.get_origin(tp)
    if origin is typing.Union or origin is types.UnionType:
        return _union_decoder(typing.get_args(tp))
    if origin is typing.Literal:
        return _identity
    if origin in (list, set, frozenset, tuple) or tp in (list, set, frozenset, tuple):
        return _sequence_decoder(origin or tp, typing.get_args(tp))
    if origin in (dict, Mapping) or tp is dict:
        args = typing.get_args(tp)
        return _mapping_decoder(args[1] if len(args) == 2 else Any)
    if isinstance(tp, type):
        return _class_decoder(tp)
    return _identity


def _identity(data: Any) -> Any:
    return data


def _expect_none(data: Any) -> None:
    if data is not None:
        raise CodecError(f"expected null, got {type(data).__name__}")


def _union_decoder(args: tuple[Any, ...]) -> Decoder:
    optional = type(None) in args
    others = [a for a in args if a is not type(None)]

    if optional and len(others) == 1:
        only = _decoder(others[0])
        return lambda data: None if data is None else only(data)

    def decode(data: Any) -> Any:
        if data is None and optional:
            return None
        errors: list[str] = []
        for arg in others:
            try:
                return _decoder(arg)(data)
            except (CodecError, ValueError, TypeError) as exc:
                errors.append(str(exc))
        raise CodecError("; ".join(errors) or "no alternative matched")

    return decode


def _sequence_decoder(container: Any, args: tuple[Any, ...]) -> Decoder:
    if container is tuple and args and args[-1] is not Ellipsis:
        parts = [_decoder(a) for a in args]

        def decode_fixed(data: Any) -> Any:
            _require(data, list | tuple, "a list")
            return tuple(p(v) for p, v in zip(parts, data, strict=True))

        return decode_fixed
    item = _decoder(args[0]) if args else _identity
    build: Callable[[Iterable[Any]], Any] = container if container is not list else list

    def decode(data: Any) -> Any:
        if type(data) is not list:
            _require(data, list | tuple, "a list")
        if build is list:
            return [item(v) for v in data]
        return build(item(v) for v in data)

    return decode


def _mapping_decoder(value_type: Any) -> Decoder:
    value = _decoder(value_type)

    def decode(data: Any) -> Any:
        if type(data) is not dict:
            _require(data, Mapping, "an object")
        if value is _identity:
            return dict(data)
        return {k: value(v) for k, v in data.items()}

    return decode


def _class_decoder(tp: type) -> Decoder:
    if dataclasses.is_dataclass(tp):
        return _dataclass_decoder(tp)
    if issubclass(tp, Enum):
        return lambda data: tp(data)
    if tp is bool:
        return _decode_bool
    if tp is int:
        return _decode_int
    if tp is float:
        return _decode_float
    if tp is str:
        return _decode_str
    if tp is datetime:
        return lambda data: datetime.fromisoformat(_checked(data, str, "an ISO date-time"))
    if tp is date:
        return lambda data: date.fromisoformat(_checked(data, str, "an ISO date"))
    if tp is timedelta:
        return lambda data: timedelta(seconds=_decode_float(data))
    if issubclass(tp, PurePath):
        return lambda data: tp(_checked(data, str, "a path"))
    if tp is bytes:
        return lambda data: base64.b64decode(_checked(data, str, "base64 text"))
    return _identity


def _dataclass_decoder(tp: type) -> Decoder:
    hints = typing.get_type_hints(tp)
    spec = [(f.name, f.init, hints.get(f.name, Any)) for f in dataclasses.fields(tp)]
    # Field decoders are resolved on first use, not while this decoder is being built,
    # so a dataclass that refers to itself does not recurse forever.
    resolved: list[tuple[str, bool, Decoder]] = []

    def decode(data: Any) -> Any:
        if isinstance(data, tp):
            return data
        if type(data) is not dict:
            _require(data, Mapping, f"an object for {tp.__name__}")
        if not resolved:
            resolved.extend((name, init, _decoder(hint)) for name, init, hint in spec)
        init: dict[str, Any] = {}
        late: dict[str, Any] = {}
        for name, in_init, field_decoder in resolved:
            if name not in data:
                continue
            try:
                value = field_decoder(data[name])
            except (CodecError, ValueError, TypeError) as exc:
                raise CodecError(f"{tp.__name__}.{name}: {exc}") from exc
            (init if in_init else late)[name] = value
        obj = tp(**init)
        for name, value in late.items():
            setattr(obj, name, value)
        return obj

    return decode


def _decode_str(data: Any) -> str:
    if type(data) is str:
        return data
    _require(data, str, "a string")
    return str(data)


def _decode_bool(data: Any) -> bool:
    if type(data) is bool:
        return data
    raise CodecError(f"expected a boolean, got {type(data).__name__}")


def _decode_int(data: Any) -> int:
    if type(data) is int:
        return data
    if isinstance(data, bool) or not isinstance(data, int | float) or int(data) != data:
        raise CodecError(f"expected an integer, got {data!r:.40}")
    return int(data)


def _decode_float(data: Any) -> float:
    if type(data) is float:
        return data
    if isinstance(data, bool) or not isinstance(data, int | float):
        raise CodecError(f"expected a number, got {data!r:.40}")
    return float(data)


def _checked(data: Any, kind: type | types.UnionType, what: str) -> Any:
    _require(data, kind, what)
    return data


def _require(data: Any, kind: Any, what: str) -> None:
    if not isinstance(data, kind):
        raise CodecError(f"expected {what}, got {type(data).__name__}")
