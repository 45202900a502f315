"""What provenance records: a value, its sources, and the instructions found in data."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..tokens import content_text
from .detector import Flag

__all__ = ["KINDS", "Flagged", "Source", "Value", "leaves", "parsed", "text_of"]

#: The kinds of source, in the order a value's sources are listed.
KINDS = ("user", "instructions", "memory", "tool_result", "invented")


@dataclass(frozen=True, slots=True)
class Flagged:
    """An instruction found in a tool result or memory: the message, its call, the JSON path
    of the string it is in, and the :class:`~.detector.Flag` (span, rules, why)."""

    message: int
    call_id: str | None
    tool: str | None
    path: str
    flag: Flag

    @property
    def label(self) -> str:
        where = f"tool_result[{self.call_id}]" if self.call_id is not None else "memory"
        return f"{where}{' ' + self.path if self.path else ''}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "message": self.message,
            "call": self.call_id,
            "tool": self.tool,
            "path": self.path,
            **self.flag.to_dict(),
        }

    def mark(self) -> dict[str, Any]:
        """What a view marks of it (the live view and the saved HTML alike): the JSON path, the
        span in code points of the string there, the rules and why."""
        flag = self.flag
        return {"path": self.path, "start": flag.start, "end": flag.end,
                "rules": list(flag.rules), "why": flag.why}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Source:
    """One place a value can be read: its kind, message, call, JSON path, the span matched
    (``[start, end)`` of that string) and its text, how sure, and the flag it lies in."""

    kind: str
    message: int | None
    call_id: str | None
    path: str
    start: int
    end: int
    text: str
    confidence: float
    flag: Flagged | None = None

    @property
    def label(self) -> str:
        """``user[0]``, ``instructions``, ``memory``, ``tool_result[call_2]``."""
        if self.kind == "user":
            return f"user[{self.message}]"
        if self.kind == "tool_result":
            return f"tool_result[{self.call_id}]"
        return self.kind

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kind": self.kind,
            "label": self.label,
            "message": self.message,
            "path": self.path,
            "start": self.start,
            "end": self.end,
            "text": self.text,
            "confidence": self.confidence,
        }
        if self.call_id is not None:
            out["call"] = self.call_id
        if self.flag is not None:
            out["flag"] = {"rules": list(self.flag.flag.rules), "why": self.flag.flag.why}
        return out


@dataclass(frozen=True, slots=True)
class Value:
    """One traced value: a call's argument (``arg`` a JSON path such as ``items[0].label``) or
    a figure of an assistant's text (``call_id`` None, ``arg`` ``"answer"``)."""

    message: int
    call_id: str | None
    tool: str | None
    arg: str
    value: Any
    sources: tuple[Source, ...]
    run_id: str | None = None

    @property
    def invented(self) -> bool:
        return not self.sources

    @property
    def steered(self) -> bool:
        """Every source is a flagged span: the value came only from an instruction in data."""
        return bool(self.sources) and all(s.flag is not None for s in self.sources)

    @property
    def kinds(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(s.kind for s in self.sources)) or ("invented",)

    @property
    def confidence(self) -> float:
        return max((s.confidence for s in self.sources), default=0.0)

    @property
    def where(self) -> str:
        """``search_hotels(city)`` for an argument, ``answer #9`` for a figure."""
        if self.call_id is None:
            return f"answer #{self.message}"
        return f"{self.tool}({self.arg})"

    def chain(self) -> str:
        """The value and where it came from, in one line (a check's reason)."""
        shown = json.dumps(self.value, ensure_ascii=False)
        if len(shown) > 60:
            shown = shown[:57] + "…"
        head = f"{self.where} = {shown}"
        if self.call_id is not None:
            head += f" (call {self.call_id}, #{self.message})"
        if not self.sources:
            return head + " <- invented (in nothing the model was given)"
        parts = []
        for s in self.sources:
            bit = s.label + (f" {s.path}" if s.path else "")
            if s.flag is not None:
                bit += f", in an instruction found in data: {s.flag.flag.why}"
            parts.append(bit)
        return head + " <- " + " | ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return {
            "message": self.message,
            "call": self.call_id,
            "tool": self.tool,
            "arg": self.arg,
            "value": self.value,
            "kinds": list(self.kinds),
            "steered": self.steered,
            "sources": [s.to_dict() for s in self.sources],
        }


def leaves(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """``(path, leaf)`` of a JSON value: paths as the view writes them (``a.b[0].c``)."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from leaves(v, f"{path}.{k}" if path else str(k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from leaves(v, f"{path}[{i}]")
    else:
        yield path, value


def text_of(content: Any) -> str:
    """A message's text by the one rule (:func:`agentnb.tokens.content_text`); any other
    value (a tool's raw result) as its JSON."""
    if content is None or isinstance(content, str | list | tuple):
        return content_text(content)
    return json.dumps(content, ensure_ascii=False)


def parsed(text: str) -> Any:
    stripped = text.strip()
    if stripped[:1] in ("{", "["):
        try:
            return json.loads(stripped)
        except ValueError:
            return None
    return None
