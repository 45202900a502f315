"""execute_tools: look up, validate and run each call; every outcome becomes a tool message.

Nothing a model does here raises: malformed JSON, an unknown tool, invalid arguments, a
``ToolError``, any other exception and a timeout each become a structured result
(``{"ok": false, "error": ..., "hint": ...}``) with the call's id, and the run goes on
(invariant 3, 000 §5.2, 002 §2.3). Calls in one reply run concurrently unless the agent
says ``parallel_tool_calls=False`` or a tool is ``sequential``; results are appended in
call order either way.
"""

from __future__ import annotations

import asyncio
import functools
import json
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from ..events import ToolFinished, ToolsExecuted, ToolStarted
from ..messages import ToolCall
from ..tools import ToolError, describe_validation_error, error_content, to_content

if TYPE_CHECKING:
    from ..tools import Tool
    from .run import Run


@dataclass(slots=True)
class Outcome:
    """What one call produced: the content the model sees, and how it went."""

    content: str
    ok: bool = True
    error_kind: str | None = None
    latency: float = 0.0


def _signature_hint(tool: Tool) -> str:
    props = tool.parameters.get("properties", {})
    required = set(tool.parameters.get("required", []))
    parts = []
    for name, spec in props.items():
        kind = spec.get("type") or "value"
        parts.append(f"{name} ({kind}{', required' if name in required else ''})")
    return f"call {tool.name} with a JSON object of: " + ", ".join(parts)


async def _invoke(run: Run, tool: Tool, kwargs: dict[str, Any]) -> Any:
    timeout = tool.timeout if tool.timeout is not None else run.agent.tool_timeout
    if tool.is_async:
        if timeout is None:
            return await tool.fn(**kwargs)
        async with asyncio.timeout(timeout):
            return await tool.fn(**kwargs)
    if tool.threaded:
        loop = asyncio.get_running_loop()
        future = loop.run_in_executor(None, functools.partial(tool.fn, **kwargs))
        return await asyncio.wait_for(future, timeout)
    return tool.fn(**kwargs)


async def run_call(run: Run, call: ToolCall) -> Outcome:
    """Run one call and return its outcome; records it in ``run.outcomes`` as well."""
    name = call.function.name
    raw = call.function.arguments
    run.emit(ToolStarted, call_id=call.id, name=name, arguments=raw)
    started = time.monotonic()
    tool = run.agent.tools.get(name)
    kind: str | None = None
    args: Any = None
    if tool is None:
        kind = "unknown_tool"
        available = ", ".join(run.agent.tools.names) or "(none)"
        content = error_content(
            f"unknown tool {name!r}",
            f"available tools: {available}. Call one of them by its exact name, or answer "
            "without a tool.",
        )
    else:
        try:
            args = json.loads(raw) if raw.strip() else {}
        except ValueError as exc:
            args = None
            kind = "malformed_json"
            content = error_content(
                f"the arguments of {name} are not valid JSON ({exc})",
                "send the arguments as one JSON object; " + _signature_hint(tool),
                arguments=raw[:500],
            )
        if args is not None and not isinstance(args, dict):
            kind = "malformed_json"
            content = error_content(
                f"the arguments of {name} must be a JSON object, got {type(args).__name__}",
                _signature_hint(tool),
            )
        elif args is not None:
            try:
                kwargs = tool.validate(args)
            except ValidationError as exc:
                kind = "invalid_arguments"
                content = error_content(
                    f"invalid arguments for {name}",
                    _signature_hint(tool),
                    problems=describe_validation_error(exc),
                )
            else:
                content, kind = await _execute(run, tool, kwargs)
    outcome = Outcome(content, kind is None, kind, time.monotonic() - started)
    run.outcomes[call.id] = outcome
    if kind is None:
        run.record_action(name, args)
    run.emit(
        ToolFinished,
        call_id=call.id,
        name=name,
        ok=outcome.ok,
        content=content,
        latency=outcome.latency,
        error_kind=kind,
    )
    return outcome


async def _execute(run: Run, tool: Tool, kwargs: dict[str, Any]) -> tuple[str, str | None]:
    try:
        value = await _invoke(run, tool, kwargs)
        return to_content(value), None
    except ToolError as exc:
        return (
            error_content(exc.message, exc.hint, retryable=exc.retryable, **exc.data),
            "tool_error",
        )
    except TimeoutError:
        timeout = tool.timeout if tool.timeout is not None else run.agent.tool_timeout
        return (
            error_content(
                f"{tool.name} timed out after {timeout:g} s",
                "the service is slow or down: retry once at most, otherwise tell the user this "
                "information is unavailable right now",
                retryable=True,
            ),
            "timeout",
        )
    except Exception as exc:
        return (
            error_content(
                f"{type(exc).__name__}: {exc}",
                f"{tool.name} failed; check the arguments, and do not repeat the same call",
            ),
            "exception",
        )


def _segments(run: Run, calls: list[ToolCall]) -> list[list[ToolCall]]:
    """Split calls into groups that may run together, preserving order."""
    if len(calls) == 1 or run.agent.parallel_tool_calls is False:
        return [[c] for c in calls]
    groups: list[list[ToolCall]] = []
    current: list[ToolCall] = []
    for call in calls:
        tool = run.agent.tools.get(call.function.name)
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


async def execute_tools(run: Run) -> None:
    started = time.monotonic()
    calls = list(run.pending)
    failed = 0
    for group in _segments(run, calls):
        if len(group) == 1:
            await run_call(run, group[0])
        else:
            await asyncio.gather(*(run_call(run, c) for c in group))
        for call in group:  # append as each group completes: call order, visible early
            outcome = run.outcomes[call.id]
            failed += not outcome.ok
            run.answer(call, outcome.content)
    run.emit(ToolsExecuted, calls=len(calls), failed=failed, latency=time.monotonic() - started)
