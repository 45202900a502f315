"""The one event codec: an event as a JSON-ready dict and back, and the JSONL trace format.

:func:`event_to_dict` writes an event's fields by their values (a message as its wire dict, a
request as its messages, tools and params, a usage as its figures); :func:`event_from_dict`
rebuilds each field by its *declared type*, so a new event type round-trips with no decoder
of its own.

The JSONL trace format stores every message once and rebuilds every request exactly.

One JSON object per line, split on ``\\n`` only (U+2028 and friends are ordinary characters
inside strings). Besides events, a file holds declarations that events refer to:

* ``{"type": "$message", "id": 7, "message": {...}}`` - a message, once;
* ``{"type": "$tools", "id": 2, "tools": [...]}`` - a tool-schema list, once per version;
* ``{"type": "$source", "id": 0, "from": 12, "items": [[7, 3], ...]}`` - messages 12.. of a
  transcript's message list, as runs of consecutive message ids (``[first id, count]``).

An event's ``message`` field is ``{"$m": id}``; a request is ``{"$req": {"head": [ids],
"source": id, "spans": [[a, b], ...], "tools": id, "params": {...}}}``, the same references
the runtime keeps in memory. So a file grows with the run, never with its square.
"""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from .. import _json
from ..errors import AgentnbError, TraceFormatError
from ..events import Event, Origin
from ..messages import AssistantMessage, Message, parse_message
from ..models.base import ModelRequest, Usage
from ..models.response import USAGE_DETAILS

__all__ = ["decode", "encode", "encode_value", "event_from_dict", "event_to_dict"]

_MESSAGES = typing.get_args(Message)


def encode_value(value: Any) -> Any:
    """A field's value as JSON-ready data (read only: wire dicts are shared, not copied)."""
    if isinstance(value, _MESSAGES):
        return value.wire()
    if isinstance(value, ModelRequest):
        return {"messages": value.messages, "tools": value.tools, "params": value.params}
    if isinstance(value, Usage):  # the API's details only when it reported them
        data = {k: v for k, v in dataclasses.asdict(value).items() if k not in USAGE_DETAILS}
        return {**data, **value.details()}
    if isinstance(value, tuple | list):
        return [encode_value(v) for v in value]
    return value


def event_to_dict(event: Event) -> dict[str, Any]:
    """A JSON-ready dict with ``type`` and every field; :func:`event_from_dict` reverses it."""
    data = event.header()
    for key, value in event.fields().items():
        data[key] = encode_value(value)
    return data


def _request(data: Any) -> ModelRequest:
    if isinstance(data, ModelRequest):  # a trace's reference, already rebuilt
        return data
    return ModelRequest(data["messages"], data["tools"], data["params"])


def _tuples(data: Any) -> tuple[Any, ...]:
    return tuple(_tuples(x) if isinstance(x, list) else x for x in data)


def _usage(data: dict[str, Any]) -> Usage:
    return Usage(**data)


def _decoder(hint: Any) -> Callable[[Any], Any] | None:
    """How a field of declared type ``hint`` is rebuilt from JSON (None: as it is)."""
    if typing.get_origin(hint) in (types.UnionType, typing.Union) and hint != Message:
        kinds = [a for a in typing.get_args(hint) if a is not type(None)]
        return _decoder(kinds[0]) if len(kinds) == 1 else None
    if hint == Message or hint is AssistantMessage:
        return parse_message
    if hint is ModelRequest:
        return _request
    if hint is Usage:
        return _usage
    if hint is tuple or typing.get_origin(hint) is tuple:
        return _tuples
    return None


_FIELD_DECODERS: dict[type[Event], dict[str, Callable[[Any], Any]]] = {}


def _field_decoders(cls: type[Event]) -> dict[str, Callable[[Any], Any]]:
    """Field name -> decoder, read once per event type from its type hints."""
    found = _FIELD_DECODERS.get(cls)
    if found is None:
        hints = typing.get_type_hints(cls)
        common = {f.name for f in dataclasses.fields(Event)}
        found = _FIELD_DECODERS[cls] = {
            f.name: decode
            for f in dataclasses.fields(cls)
            if f.name not in common and (decode := _decoder(hints[f.name])) is not None
        }
    return found


def _event_types() -> dict[str, type[Event]]:
    found: dict[str, type[Event]] = {}
    todo = [Event]
    while todo:
        for sub in todo.pop().__subclasses__():
            found[sub.__name__] = sub
            todo.append(sub)
    return found


def event_from_dict(data: dict[str, Any]) -> Event:
    """Rebuild an event from :func:`event_to_dict` output (e.g. a line of a JSONL trace)."""
    data = dict(data)
    name = data.pop("type")
    cls = _event_types().get(name)
    if cls is None:
        raise ValueError(f"unknown event type {name!r}")
    data["origin"] = Origin(
        data.pop("session_id"),
        data.pop("run_id"),
        data.pop("trace_id"),
        data["time"],
        data.pop("wall"),
        data.pop("task_id", None),
    )
    for key, decode in _field_decoders(cls).items():
        if data.get(key) is not None:
            data[key] = decode(data[key])
    return cls(**data)


# -- the JSONL trace format -----------------------------------------------------------------

HEADER = {"type": "$agentnb-trace", "version": 2}


def _dump(record: dict[str, Any]) -> str:
    return _json.dumps(record, separators=(",", ":")) + "\n"  # see agentnb._json


class _Encoder:
    def __init__(self) -> None:
        self.messages: dict[int, int] = {}  # id(wire dict) -> message id
        self.keep: list[Any] = []  # keeps every referenced object alive: ids stay unique
        self.tools: dict[int, int] = {}
        self.sources: dict[int, list[int]] = {}  # id(list) -> [source id, declared up to]
        self.out: list[str] = [_dump(HEADER)]

    def message(self, wire: dict[str, Any]) -> int:
        key = id(wire)
        found = self.messages.get(key)
        if found is None:
            found = self.messages[key] = len(self.messages)
            self.keep.append(wire)
            self.out.append(_dump({"type": "$message", "id": found, "message": wire}))
        return found

    def source(self, items: list[dict[str, Any]], upto: int) -> int:
        entry = self.sources.get(id(items))
        if entry is None:
            entry = self.sources[id(items)] = [len(self.sources), 0]
            self.keep.append(items)
        sid, done = entry
        if upto > done:
            ids = [self.message(w) for w in items[done:upto]]
            runs: list[list[int]] = []
            for mid in ids:
                if runs and runs[-1][0] + runs[-1][1] == mid:
                    runs[-1][1] += 1
                else:
                    runs.append([mid, 1])
            self.out.append(_dump({"type": "$source", "id": sid, "from": done, "items": runs}))
            entry[1] = upto
        return sid

    def request(self, request: ModelRequest) -> dict[str, Any]:
        tools = request.tools
        tid = self.tools.get(id(tools))
        if tid is None:
            tid = self.tools[id(tools)] = len(self.tools)
            self.keep.append(tools)
            self.out.append(_dump({"type": "$tools", "id": tid, "tools": tools}))
        spans = request.spans
        upto = max((b for _, b in spans), default=0)
        return {
            "head": [self.message(w) for w in request.head],
            "source": self.source(request.source, upto),
            "spans": [list(s) for s in spans],
            "tools": tid,
            "params": request.params,
        }

    def event(self, event: Event) -> None:
        data = event.header()
        for key, value in event.fields().items():
            if key == "message":
                data[key] = {"$m": self.message(value.wire())}
            elif key == "request":
                data[key] = {"$req": self.request(value)}
            else:
                data[key] = encode_value(value)
        self.out.append(_dump(data))


def encode(events: Iterable[Event]) -> str:
    encoder = _Encoder()
    for event in events:
        encoder.event(event)
    return "".join(encoder.out)


class _Decoder:
    def __init__(self) -> None:
        self.wires: dict[int, dict[str, Any]] = {}
        self.objects: dict[int, Any] = {}
        self.tools: dict[int, list[dict[str, Any]]] = {}
        self.sources: dict[int, list[dict[str, Any]]] = {}

    def line(self, data: dict[str, Any]) -> Event | None:
        kind = data.get("type")
        if kind == "$agentnb-trace":
            if data.get("version") != HEADER["version"]:
                raise ValueError(f"trace format version {data.get('version')!r} is not supported")
            return None
        if kind == "$message":
            self.wires[data["id"]] = data["message"]
            return None
        if kind == "$tools":
            self.tools[data["id"]] = data["tools"]
            return None
        if kind == "$source":
            items = self.sources.setdefault(data["id"], [])
            if data["from"] != len(items):
                raise ValueError(f"source {data['id']} resumes at {data['from']}, not {len(items)}")
            for first, count in data["items"]:
                items += [self.wires[first + k] for k in range(count)]
            return None
        message = data.get("message")
        if isinstance(message, dict) and "$m" in message:
            data["message"] = self.object(message["$m"])
        request = data.get("request")
        if isinstance(request, dict) and "$req" in request:
            ref = request["$req"]
            data["request"] = ModelRequest(
                tools=self.tools[ref["tools"]],
                params=ref["params"],
                head=tuple(self.wires[i] for i in ref["head"]),
                source=self.sources[ref["source"]],
                spans=tuple((a, b) for a, b in ref["spans"]),
            )
        return event_from_dict(data)

    def object(self, mid: int) -> Any:
        found = self.objects.get(mid)
        if found is None:
            found = self.objects[mid] = parse_message(self.wires[mid], where=f"message {mid}")
        return found


def decode(lines: Iterable[str]) -> Iterator[Event]:
    """Events from the lines of a trace file (numbered from 1 in errors)."""
    decoder = _Decoder()
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
            if not isinstance(data, dict):
                raise ValueError(f"expected a JSON object, got {type(data).__name__}")
            event = decoder.line(data)
        except RecursionError:
            raise TraceFormatError(f"trace line {number} is nested too deeply", number) from None
        except (ValueError, KeyError, TypeError, IndexError, AgentnbError) as exc:
            what = f"missing {exc}" if isinstance(exc, KeyError) else str(exc)
            raise TraceFormatError(f"trace line {number} cannot be read: {what}", number) from None
        if event is not None:
            yield event
