"""The JSONL trace format: every message stored once, every request rebuilt exactly.

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

import json
from collections.abc import Iterable, Iterator
from typing import Any

from .. import _json
from ..errors import AgentnbError, TraceFormatError
from ..events import Event, _encode, event_from_dict
from ..messages import parse_message
from ..models.base import ModelRequest

__all__ = ["decode", "encode"]

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
        spans = request._spans
        upto = max((b for _, b in spans), default=0)
        return {
            "head": [self.message(w) for w in request._head],
            "source": self.source(request._source, upto),
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
                data[key] = _encode(value)
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
