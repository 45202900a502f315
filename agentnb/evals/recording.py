"""Tool recordings: replay recorded tool results so an evaluation never fires a side effect.

    rec = an.ToolRecording.from_sessions([session_a, session_b])   # or .from_evaluation(ev)
    offline = agent.replaying(rec)                    # tools answer from the recording
    offline = agent.replaying(rec, missing="live")    # unrecorded calls run for real

A recording maps ``(tool, canonical arguments)`` to the results seen, in order (an identical
call asked twice gets the recorded results in turn, the last one after that). Arguments are
compared as the replaying tool validated them, so ``{"date": "周五"}`` and the same call
with defaults spelled out are one call. A call with no recording is never executed: it gets
an error result of kind ``not_recorded``, and :attr:`ToolRecording.misses` says where.
What a tool itself answered is recorded, a ``ToolError`` ("unknown city") included, and
replayed as it was; failures the runtime made (a timeout, invalid arguments) are not.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..errors import ConfigurationError
from ..messages import ToolMessage
from ..tools import ToolError
from .batches import batches
from .normalise import canonical

if TYPE_CHECKING:
    from ..tools import Tool

__all__ = ["Miss", "ToolRecording"]

Missing = Literal["not_recorded", "live"]


class Miss(dict[str, Any]):
    """An unrecorded call: ``{"tool", "arguments", "served": "not_recorded" | "live"}``."""


#: What the tool itself said is recorded (a result, or a ToolError such as "unknown city");
#: failures the runtime made (timeouts, invalid arguments, cancelled, not_recorded) are not.
_RECORDED = (None, "tool_error")


class ToolRecording:
    """Recorded tool results by ``(tool, canonical arguments)``; see the module docstring."""

    def __init__(self, entries: Iterable[tuple[str, Any, str]] = ()) -> None:
        self.entries: list[tuple[str, str, str]] = []
        for name, arguments, result in entries:
            self.add(name, arguments, result)
        #: Calls a replaying agent could not answer from the recording, in order.
        self.misses: list[Miss] = []
        #: How many calls were answered from the recording.
        self.hits = 0

    def add(self, tool: str, arguments: Any, result: str) -> None:
        """Record that ``tool(arguments)`` returned ``result`` (a tool message's content)."""
        self.entries.append((tool, canonical(arguments), result))

    @classmethod
    def from_sessions(cls, sessions: Iterable[Any]) -> ToolRecording:
        """Every answered tool call of these sessions (or run results, or message lists)."""
        recording = cls()
        for source in sessions:
            messages = getattr(source, "messages", source)
            for batch in batches(messages):
                for call in batch:
                    if call.result is not None and call.kind in _RECORDED:
                        recording.add(call.name, call.arguments, call.result)
        return recording

    @classmethod
    def from_evaluation(
        cls, evaluation: Any, variants: Iterable[str] | None = None
    ) -> ToolRecording:
        """Every successful tool result of an evaluation's runs (of ``variants``, or all)."""
        chosen = set(variants) if variants is not None else None
        return cls.from_sessions(
            evaluation.session(r.variant, r.task, r.repeat)
            for r in evaluation.records
            if chosen is None or r.variant in chosen
        )

    def source(self, missing: Missing = "not_recorded") -> _Pool:
        """What answers a replaying agent's tool calls (``agent.replaying(recording, ...)``):
        an unrecorded call gets a ``not_recorded`` error, or runs if ``missing="live"``."""
        if missing not in ("not_recorded", "live"):
            raise ConfigurationError(f"missing must be 'not_recorded' or 'live', not {missing!r}")
        return _Pool(self, missing)

    def results(self, tool: Tool | str, key: str) -> list[str]:
        name = tool if isinstance(tool, str) else tool.name
        return [r for n, k, r in self.entries if n == name and k == key]

    # -- files -----------------------------------------------------------------------------
    def save(self, path: str | os.PathLike[str]) -> Path:
        """One ``{"tool", "arguments", "result"}`` object per line."""
        path = Path(path)
        lines = [
            json.dumps({"tool": n, "arguments": k, "result": r}, ensure_ascii=False)
            for n, k, r in self.entries
        ]
        path.write_text("\n".join(lines) + ("\n" if lines else ""), encoding="utf-8")
        return path

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> ToolRecording:
        rows = [
            json.loads(line)
            for line in Path(path).read_text(encoding="utf-8").splitlines()
            if line.strip()
        ]
        return cls((r["tool"], r["arguments"], r["result"]) for r in rows)

    def __len__(self) -> int:
        return len(self.entries)

    def __repr__(self) -> str:
        tools = sorted({n for n, _, _ in self.entries})
        return f"<ToolRecording {len(self)} results of {', '.join(tools) or 'no tools'}>"


class NotRecorded(ToolError):
    """The call is not in the recording: the model gets a ``not_recorded`` error result."""

    def __init__(self, tool: str, arguments: str) -> None:
        super().__init__(
            f"{tool}({arguments}) is not in the tool recording, so it was not executed",
            hint="this run replays recorded tool results; this call diverged from the recording",
            kind="not_recorded",
        )


def _validated_key(tool: Tool, arguments: str) -> str:
    """The canonical arguments as ``tool`` validates them (defaults filled in)."""
    try:
        return canonical(tool.validate(json.loads(arguments)))
    except Exception:  # not valid for this tool: compare as written
        return arguments


def _recorded(content: str) -> str:
    """A recorded result as the model saw it: text back as text, a ToolError raised again."""
    error = ToolMessage(tool_call_id="-", content=content).error
    if error is None:
        return content
    data = {k: v for k, v in error.items() if k not in ("ok", "kind", "error", "hint", "retryable")}
    raise ToolError(
        str(error.get("error", "")),
        hint=error.get("hint"),
        retryable=error.get("retryable"),
        data=data,
        kind="tool_error",
    )


class _Pool:
    """Answers a replaying tool's calls from the recording by ``(tool, canonical arguments)``."""

    def __init__(self, recording: ToolRecording, missing: Missing) -> None:
        self.recording = recording
        self.missing = missing
        self.live = missing == "live"
        self.served: dict[tuple[str, str], int] = defaultdict(int)
        self.index: dict[str, dict[str, list[str]]] = {}

    def _results(self, tool: Tool) -> dict[str, list[str]]:
        found = self.index.get(tool.name)
        if found is None:
            found = self.index[tool.name] = defaultdict(list)
            for name, key, result in self.recording.entries:
                if name == tool.name:
                    found[_validated_key(tool, key)].append(result)
        return found

    async def answer(self, tool: Tool, arguments: dict[str, Any], call: Any) -> Any:
        key = canonical(arguments)
        results = self._results(tool).get(key)
        if results:
            n = self.served[tool.name, key]
            self.served[tool.name, key] = n + 1
            self.recording.hits += 1
            return _recorded(results[min(n, len(results) - 1)])
        self.recording.misses.append(Miss(tool=tool.name, arguments=key, served=self.missing))
        if self.missing == "live":
            if tool.is_async:
                return await tool.fn(**arguments)
            return await asyncio.to_thread(tool.fn, **arguments)
        raise NotRecorded(tool.name, key)
