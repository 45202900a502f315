"""The replayer: how a replaying agent's tool calls are answered from a ToolRecording.

See :mod:`agentnb.evals.recording` for the rules (own trajectory first; ``mismatch``,
``exhausted``, ``not_recorded`` naming turn, step and call; the arguments pool only with
``match="arguments"``; live only with ``missing="live"``). The evaluation names the run a
replaying tool answers for with :func:`replaying_run`.
"""

from __future__ import annotations

import asyncio
import copy
import json
from collections import defaultdict
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Literal

from ..messages import ToolMessage
from ..tools import ERROR_KINDS, ToolError
from .batches import position_of
from .faithful import Answered, Log, Replayed, judge
from .normalise import canonical
from .states import Refused

if TYPE_CHECKING:
    from ..tools import Tool, ToolCallContext
    from .batches import PairedCall
    from .recording import Recorded, ToolRecording

__all__ = ["Match", "Missing", "Replayer", "RunKey", "replaying_run"]

Missing = Literal["not_recorded", "live"]
Match = Literal["trajectory", "arguments"]
RunKey = tuple[str, str, int]

#: The run a replaying tool answers for, and the log of what it answered: set by the
#: evaluation around each run.
_RUN: ContextVar[RunKey | None] = ContextVar("agentnb_replay_run", default=None)
_LOG: ContextVar[Log | None] = ContextVar("agentnb_replay_log", default=None)


@contextmanager
def replaying_run(key: RunKey) -> Iterator[Log]:
    """Inside this block, replaying tools answer as the run ``(variant, task, repeat)`` and
    note each call they answer in the log it gives (:mod:`agentnb.evals.faithful`)."""
    log = Log()
    token, logged = _RUN.set(key), _LOG.set(log)
    try:
        yield log
    finally:
        _LOG.reset(logged)
        _RUN.reset(token)


class Miss(dict[str, Any]):
    """A call the recording did not answer: ``tool``, ``arguments``, ``kind`` (``mismatch``,
    ``exhausted``, ``not_recorded``), ``run``, ``turn``, ``step``, ``index`` and ``served``
    (``"error"``, ``"live"`` or ``"arguments"`` when the arguments pool answered it)."""


def _note(answered: Answered) -> None:
    """Note a call answered in the running evaluation run's log (none outside one)."""
    log = _LOG.get()
    if log is not None:
        log.append(answered)


def _validated_key(tool: Tool, arguments: str) -> str:
    """The canonical arguments as ``tool`` validates them (defaults filled in)."""
    try:
        return canonical(tool.validate(json.loads(arguments)))
    except Exception:  # not valid for this tool: compare as written
        return arguments


def _recorded(content: str) -> str:
    """A recorded result as the model saw it: text back as text, an error raised again."""
    error = ToolMessage(tool_call_id="-", content=content).error
    if error is None:
        return content
    kind = str(error.get("kind") or "tool_error")
    data = {k: v for k, v in error.items() if k not in ("ok", "kind", "error", "hint", "retryable")}
    raise ToolError(
        str(error.get("error", "")),
        hint=error.get("hint"),
        retryable=error.get("retryable"),
        data=data,
        kind=kind if kind in ERROR_KINDS else "tool_error",
    )


_HINT = (
    "this run replays recorded tool results and this call left the recorded trajectory; "
    "it was not executed"
)


class Replayer:
    """Answers a replaying agent's tool calls from a :class:`ToolRecording` (its ``source``)."""

    def __init__(
        self,
        recording: ToolRecording,
        missing: Missing,
        match: Match,
        variant: str | None,
        run: RunKey | None,
    ) -> None:
        self.recording = recording
        self.missing = missing
        self.match = match
        self.variant = variant
        self.run = run
        self.live = missing == "live"
        self._runs: dict[RunKey, dict[tuple[int, int, int], Recorded]] = defaultdict(dict)
        for e in recording.entries:
            if e.turn >= 0:
                self._runs[e.run].setdefault(e.position, e)
        self._variants = list(dict.fromkeys(v for v, _, _ in self._runs))
        self._pool: dict[tuple[str, str], list[Recorded]] | None = None
        self._served: dict[tuple[RunKey | None, str, str], int] = defaultdict(int)

    def _run_key(self) -> tuple[RunKey | None, str]:
        """The recorded run to answer from, or None with the reason."""
        return self._run_key_for(_RUN.get())

    def _run_key_for(self, current: RunKey | None) -> tuple[RunKey | None, str]:
        if self.run is not None:
            return self.run, ""
        if not self._runs:
            return None, "its results have no positions: replay them with match='arguments'"
        runs = list(self._runs)
        if len(runs) == 1:  # one recorded run (a session): every replay follows it
            return runs[0], ""
        if current is None:
            return None, (
                f"the recording holds {len(runs)} runs and this run is not part of an "
                "evaluation: replay inside an.evaluate, or name one with run=(variant, task, "
                "repeat)"
            )
        variant, task, repeat = current
        if self.variant is not None:
            variant = self.variant
        elif variant not in self._variants and len(self._variants) == 1:
            variant = self._variants[0]
        return (variant, task, repeat), ""

    async def answer(
        self, tool: Tool, arguments: dict[str, Any], call: ToolCallContext | None
    ) -> Any:
        key = canonical(arguments)
        run, why = self._run_key()
        position = None
        if call is not None and call.session is not None:
            position = position_of(call.session.messages, call.call_id)
        turn, step, index = position or (0, 0, 0)
        where = f"turn {turn}, step {step}, call {index}"
        recorded = self._runs.get(run) if run is not None else None
        if recorded is None:
            kind = "not_recorded"
            shown = ", ".join(map(str, list(self._runs)[:4]))
            why = why or f"the recording holds no run {run} (recorded: {shown})"
        else:
            entry = recorded.get((turn, step, index))
            if entry is None:
                kind = "exhausted"
                made = sum(1 for t, _, _ in recorded if t == turn)
                why = f"the recorded run made no call at {where} (it made {made} in turn {turn})"
            elif entry.tool == tool.name and _validated_key(tool, entry.arguments) == key:
                self.recording.hits += 1
                _note(Answered((turn, step, index), tool.name, key))
                return _recorded(entry.result)
            else:
                kind = "mismatch"
                why = f"the recorded run called {entry.tool}({entry.arguments}) at {where}"
        miss = Miss(
            tool=tool.name,
            arguments=key,
            kind=kind,
            run=run,
            turn=turn,
            step=step,
            index=index,
            served="error",
        )
        self.recording.misses.append(miss)
        _note(Answered((turn, step, index), tool.name, key, kind, why))
        if self.match == "arguments":
            pooled = self._pooled(tool, key, run)
            if pooled is not None:
                miss["served"] = "arguments"
                self.recording.hits += 1
                return _recorded(pooled)
        if self.live:
            miss["served"] = "live"
            if tool.is_async:
                return await tool.fn(**arguments)
            return await asyncio.to_thread(tool.fn, **arguments)
        raise ToolError(
            f"{where}: {tool.name}({key}) is a replay {kind}: {why}", hint=_HINT, kind=kind
        )

    def user_turns(self, key: RunKey) -> list[Any]:
        """The recorded user turns of the conversation the run ``key`` replays ([] when the
        recording holds none: a replaying conversation then stops ``not_recorded``)."""
        run, _ = self._run_key_for(key)
        return list(self.recording.replies.get(run, [])) if run is not None else []

    def replayed(
        self,
        key: RunKey,
        log: Log,
        calls: Iterable[PairedCall],
        parted: tuple[tuple[int, int, int], str] | None = None,
    ) -> Replayed:
        """How the run ``key`` (its answered ``log``, its session's ``calls``, where its
        replayed user ``parted`` from its recording) went against the recorded run it replays
        (:func:`agentnb.evals.faithful.judge`)."""
        run, _ = self._run_key_for(key)
        recorded = self._runs.get(run, {}) if run is not None else {}
        return judge(recorded, log, calls, parted)

    def end_state(self, key: RunKey, replayed: Replayed) -> Any:
        """The end state end-state checks read for the replaying run ``key``: a copy of the
        one the recorded run left when the replay reproduced it exactly and completely (its
        tools ran nothing: the world it answered from is the one the recorded run left), else
        a :class:`~agentnb.evals.states.Refused` naming why not."""
        if not replayed.faithful:
            return Refused(f"the replay did not reproduce its recording: {replayed.difference}")
        run, why = self._run_key_for(key)
        states = self.recording.states
        if run is None or run not in states:
            return Refused(
                why
                or f"the recording holds no end state of run {run} (from_evaluation keeps the "
                "state a task's tools= or setup= gives; a recording made from sessions, or "
                "saved by an agentnb that kept none, has none)"
            )
        saved = states[run]
        return saved if isinstance(saved, Refused) else copy.deepcopy(saved)

    def _pooled(self, tool: Tool, key: str, run: RunKey | None) -> str | None:
        """The arguments pool's next result for ``tool(key)``: the run's own first."""
        if self._pool is None:
            self._pool = defaultdict(list)
            for e in self.recording.entries:
                self._pool[e.tool, e.arguments].append(e)
        found = [e for e in self._pool.get((tool.name, key), [])] or [
            e
            for (name, args), es in self._pool.items()
            if name == tool.name and _validated_key(tool, args) == key
            for e in es
        ]
        if not found:
            return None
        found.sort(key=lambda e: e.run != run)  # the run's own results first, order kept
        n = self._served[run, tool.name, key]
        self._served[run, tool.name, key] = n + 1
        return found[min(n, len(found) - 1)].result
