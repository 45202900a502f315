"""execute_tools: look up, validate and run each call; every outcome becomes a tool message.

Nothing a model does here raises: invalid JSON, arguments that are not an object, an unknown
tool, invalid arguments, a ``ToolError``, any other exception (a stray ``CancelledError``
included) and a timeout each become a structured result (``{"ok": false, "kind", "error",
"hint"}``) with the call's id, and the run goes on (invariant 3, 000 §5.2, 002 §2.3).

The calls executed are the open calls of the last assistant message, read from the
transcript, so a call edited between ``decide`` and this stage runs as edited. Calls run
concurrently unless the agent says ``parallel_tool_calls=False`` or a tool is
``sequential``; results are appended in call order either way, as each group completes.
Sync tools run in a thread of their own, async tools in a task of their own: one that times
out, or ignores being cancelled, is left to finish alone and never delays the run.
"""

from __future__ import annotations

import asyncio
import os
import time
import traceback
from collections.abc import Awaitable
from functools import partial
from typing import TYPE_CHECKING, Any

from .._fast import eager, loads
from ..events import ToolFinished, ToolsExecuted, ToolStarted
from ..messages import ToolCall
from ..tools.calls import CURRENT_CALL, ToolCallContext
from ..tools.tool import InvalidArguments, ToolError, error_content
from .guard import WAITING, admit, idempotency_key
from .state import CallOutcome, RunState, ToolRound
from .tool_work import Deadline, Finished, bounded, in_thread, isolated

if TYPE_CHECKING:
    from ..tools.tool import Tool


def _parse(tool: Tool, raw: str) -> tuple[dict[str, Any] | None, str]:
    """The arguments as a dict, or None and the structured error the model sees."""
    try:
        args = loads(raw)
    except (ValueError, RecursionError) as exc:
        if not raw.strip():  # blank: no arguments
            return {}, ""
        why = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
        return None, error_content(
            f"the arguments of {tool.name} are not valid JSON ({why})",
            "send the arguments as one JSON object; " + tool.hint,
            kind="invalid_json",
            arguments=raw[:500],
        )
    if not isinstance(args, dict):
        return None, error_content(
            f"the arguments of {tool.name} must be a JSON object, got {_json_type(args)}",
            tool.hint,
            kind="invalid_json",
            arguments=raw[:500],
        )
    return args, ""


def _json_type(value: Any) -> str:
    names = {type(None): "null", bool: "a boolean", int: "a number", float: "a number"}
    return names.get(type(value)) or ("a string" if isinstance(value, str) else "an array")


async def run_call(state: RunState, tool_round: ToolRound, call: ToolCall) -> CallOutcome:
    """Run one call; its outcome goes into ``tool_round`` (keyed by this message's ids)."""
    name = call.function.name
    raw = call.function.arguments
    tool = state.agent.tools.get(name)
    key = None  # a guarded call's (see guard.py); attributes only: a plain call pays nothing
    if tool is not None and (tool.approval or tool.side_effects or state.agent.tools.side_effects):
        key = idempotency_key(state, tool_round, call)
    started = state.emit(
        ToolStarted, call_id=call.id, name=name, arguments=raw, idempotency_key=key
    ).time
    args: dict[str, Any] | None = None
    if tool is None:
        available = ", ".join(state.agent.tools.names) or "(none)"
        hint = f"available tools: {available}. Call one of them by its exact name, or answer "
        outcome = _failed("unknown_tool", f"unknown tool {name!r}", hint + "without a tool.")
    else:
        args, problem = _parse(tool, raw)
        if args is None:
            outcome = CallOutcome(problem, False, "invalid_json")
        else:
            try:
                kwargs = tool.validate(args)
            except InvalidArguments as exc:
                why = f"invalid arguments for {name}"
                hint = tool.hint
                outcome = _failed("invalid_arguments", why, hint, problems=exc.problems)
            else:
                if key and (settled := admit(state, tool_round, call, tool, key)):  # see guard
                    if settled.kind is WAITING:  # left open: no result yet
                        return settled
                    return _finish_call(state, tool_round, call, started, settled, args)
                here = token = None
                if tool.call_context or key:  # an.tools.current_call(): tasks, threads copy it
                    here = ToolCallContext(call.id, name, state.session, state.id, None, key)
                    token = CURRENT_CALL.set(here)
                try:
                    outcome = await _execute(state, tool, _invoke(state, tool, kwargs, started))
                except Finished as finished:  # it finished just as the run was cancelled
                    outcome = await _execute(state, tool, finished.result())
                    _finish_call(state, tool_round, call, started, outcome, args, here)
                    # a plain one: 3.11's asyncio.timeout turns only CancelledError itself into
                    # TimeoutError, and the signal must not outlive the call it was about
                    raise asyncio.CancelledError from None
                finally:
                    if token is not None:
                        CURRENT_CALL.reset(token)
                return _finish_call(state, tool_round, call, started, outcome, args, here)
    return _finish_call(state, tool_round, call, started, outcome, args)


def _failed(kind: str, error: str, hint: str | None, **extra: Any) -> CallOutcome:
    """A call that failed: the model reads ``{"ok": false, "kind", "error", "hint", ...}``."""
    return CallOutcome(error_content(error, hint, kind=kind, **extra), False, kind)


def _finish_call(
    state: RunState,
    tool_round: ToolRound,
    call: ToolCall,
    started: float,
    outcome: CallOutcome,
    args: dict[str, Any] | None,
    here: ToolCallContext | None = None,
) -> CallOutcome:
    """The call is over: its outcome goes into the round, a call that ran counts toward the
    repeated-action check, and ``ToolFinished`` says how it went."""
    now = time.monotonic()
    outcome.latency = now - started
    tool_round.outcomes[call.id] = outcome
    if outcome.ok:
        state.actions.append((call.function.name, args))
    state.emit(
        ToolFinished,
        now,
        call_id=call.id,
        name=call.function.name,
        ok=outcome.ok,
        content=outcome.content,
        latency=outcome.latency,
        kind=outcome.kind,
        traceback=outcome.traceback,
        note=outcome.note,
        subsession_id=None if here is None else here.subsession_id,
    )
    return outcome


def _timeout(state: RunState, tool: Tool) -> float | None:
    return tool.timeout if tool.timeout is not None else state.agent.tool_timeout


async def _invoke(
    state: RunState, tool: Tool, kwargs: dict[str, Any], started: float
) -> tuple[str, str | None]:
    """Run the tool; its value is serialised the moment it returns, where it ran."""
    timeout = tool.timeout if tool.timeout is not None else state.agent.tool_timeout
    if tool.is_async:
        if tool.isolated:
            return await isolated(tool.fn(**kwargs), timeout, tool.serialise, started)
        if timeout is None:
            return tool.serialise(await tool.fn(**kwargs))
        async with Deadline(timeout):
            return tool.serialise(await tool.fn(**kwargs))
    if tool.threaded:
        return await bounded(in_thread(partial(tool.fn, **kwargs), tool.serialise), timeout)
    return tool.serialise(tool.fn(**kwargs))


async def _execute(
    state: RunState, tool: Tool, running: Awaitable[tuple[str, str | None]]
) -> CallOutcome:
    """The outcome of a call: the content the model sees, and how it went."""
    try:
        content, note = await running
        return CallOutcome(content, note=note)
    except ToolError as exc:
        kind = getattr(exc, "kind", "tool_error")
        return _failed(kind, exc.message, exc.hint, retryable=exc.retryable, **exc.data)
    except TimeoutError:
        why = f"{tool.name} timed out after {_timeout(state, tool):g} s"
        hint = "the service is slow or down: retry once at most, otherwise tell the user this "
        hint += "information is unavailable right now"
        return _failed("timeout", why, hint, retryable=True)
    except asyncio.CancelledError as exc:
        task = asyncio.current_task()
        if task is not None and task.cancelling():
            raise  # the run (or its task) was cancelled: not the tool's doing
        return _failure(tool, exc, "the tool cancelled itself")
    except Exception as exc:
        return _failure(tool, exc, _text_of(exc))


def _text_of(exc: BaseException) -> str:
    try:
        return str(exc)
    except Exception:  # an exception whose __str__ fails still becomes a readable result
        return f"<{type(exc).__name__} whose message cannot be shown>"


def _failure(tool: Tool, exc: BaseException, text: str) -> CallOutcome:
    """A tool that raised: the model hears it failed while running, the developer where."""
    hint = f"{tool.name} accepted the arguments but failed while running (a fault in the tool "
    hint += "or its service); do not repeat the same call: tell the user, or try another way"
    outcome = _failed("tool_error", f"{type(exc).__name__}: {text}", hint)
    outcome.traceback = _traceback(exc)
    return outcome


_RUNTIME = os.path.dirname(__file__)


def _traceback(exc: BaseException) -> str:
    """The traceback from the tool's own first frame (the runtime's frames left out)."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename.startswith(_RUNTIME):
        tb = tb.tb_next
    try:
        return "".join(traceback.format_exception(type(exc), exc, tb))
    except Exception:  # a traceback that cannot be formatted still says what was raised
        return f"{type(exc).__name__} (its traceback cannot be shown)"


def _segments(state: RunState, calls: list[ToolCall]) -> list[list[ToolCall]]:
    """Split calls into groups that may run together, preserving order."""
    if state.agent.parallel_tool_calls is False:
        return [[c] for c in calls]
    groups: list[list[ToolCall]] = []
    current: list[ToolCall] = []
    for call in calls:
        tool = state.agent.tools.get(call.function.name)
        if tool is not None and tool.sequential:
            if current:
                groups.append(current)
                current = []
            groups.append([call])
        else:
            current.append(call)
    if current:
        groups.append(current)
    return groups


async def _together(state: RunState, tool_round: ToolRound, group: list[ToolCall]) -> None:
    """A group's calls, concurrently: each starts at once, in call order, in a task of its
    own (:func:`agentnb._fast.eager`: it runs until it first waits); only the calls still
    running are then awaited together, so calls that never wait cost no turn of the loop."""
    running = []
    for call in group:
        task, outcome = eager(run_call(state, tool_round, call), _same)
        if outcome is None:
            running.append(task)
        elif not outcome[0]:
            raise outcome[1]  # only the run's own cancellation gets out of run_call
    if running:
        await asyncio.gather(*running)


def _same(outcome: CallOutcome) -> CallOutcome:
    return outcome


async def execute_tools(state: RunState) -> ToolRound:
    started = time.monotonic()
    transcript = state.session.transcript
    calls = transcript.open_calls()
    at = transcript.open_at
    tool_round = state.round = ToolRound(at if at is not None else -1)
    failed = 0
    count = len(calls)
    for group in _segments(state, calls) if count > 1 else [calls]:
        if count == 1 or len(group) == 1:
            await run_call(state, tool_round, group[0])
        else:
            await _together(state, tool_round, group)
        for call in group:  # append as each group completes: call order, visible early
            outcome = tool_round.outcomes[call.id]
            if outcome.kind is WAITING:  # it awaits approval: it stays open, the run stops
                continue
            failed += not outcome.ok
            state.answer(call, outcome.content)
    now = time.monotonic()
    state.emit(ToolsExecuted, now, calls=count, failed=failed, latency=now - started)
    state.session.commit()  # a round lands whole: a crash after it loses nothing before it
    return tool_round
