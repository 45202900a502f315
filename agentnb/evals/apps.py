"""Any app as a variant: evaluate code not built on agentnb, through the recording proxy.

    async def my_app(text: str, ctx: an.evals.AppContext) -> str:
        client = openai.AsyncOpenAI(base_url=ctx.base_url, api_key=ctx.api_key,
                                    default_headers=ctx.headers)
        ...                                   # the app's own tool loop, its own tools
        return answer

    ev = await an.evaluate({"agentnb": agent,
                            "sdk": an.evals.App(my_app, upstream="http://127.0.0.1:8080/v1"),
                            "cli": an.evals.App(command=["python", "app.py"], upstream=model)},
                           tasks)

An :class:`App` is an async callable ``fn(text, ctx)`` or a command (``text`` on its standard
input; ``OPENAI_BASE_URL``, ``OPENAI_API_KEY`` and ``AGENTNB_SESSION_ID`` in its environment;
its output read with a bound and its process group ended when it exits, see
:mod:`agentnb.evals.commands`) that talks to any OpenAI-compatible endpoint. The evaluation
starts a recording proxy (:func:`agentnb.observe.proxy`) in front of ``upstream`` (a URL,
or an agentnb model, served with :func:`agentnb.observe.serve` for the sweep), points the
app at it, and rebuilds each run from the calls the proxy saw: its session and final answer
(from the conversation of the run's last call: an app that compacted its context is judged on where
it ended, not on the conversation it left), the model calls, and the tokens the upstream
reported, prompt and completion apart, priced like an agent's (``an.evals.prices`` under the
upstream model's name, or the name the app's requests gave). The same checks, trajectory
diff and statistics then apply as to an agentnb agent. End-state checks read ``ctx.state``:
set it to the app's own state after the run. One ``App`` serves any number of evaluations,
each in its own event loop.

Each run sends ``ctx.headers`` (``x-session-id``: the run's id), which the proxy threads the
run's conversation by, so runs of one app may go concurrently. An app that cannot send
headers (a command) runs one run at a time (``serial=True``, the default for commands): its
run is then the conversation the proxy saw while it ran. A run in which the proxy saw no
call is an ``error`` run saying so, never a silent empty answer.
"""

from __future__ import annotations

import asyncio
import os
import secrets
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import ConfigurationError
from ..models import Usage
from ..session import RunRecord
from .commands import run_command

if TYPE_CHECKING:
    from ..runtime import RunResult
    from ..session import Session
    from .tasks import Task

__all__ = ["App", "AppContext", "AppFailed", "Spent"]

AppFn = Callable[[str, "AppContext"], Awaitable[Any]]


class AppFailed(Exception):
    """The app raised, exited non-zero, or sent the proxy nothing: an ``error`` run."""


@dataclass
class AppContext:
    """What one run of an app gets: where to send its requests, and the task."""

    base_url: str
    headers: dict[str, str]
    api_key: str
    task: Task
    seed: int
    #: The earlier turns of the task (``Task.history``): the app decides how to use them.
    history: tuple[Any, ...] = ()
    #: Set it to what end-state checks should read (the app's own state after the run).
    state: Any = None


@dataclass(eq=False)
class App:
    """An app evaluated as a variant (see the module docstring).

    Args:
        fn: ``async fn(text, ctx) -> answer`` (the answer is optional: the proxied final
            reply is the run's answer).
        command: instead of ``fn``, a command line run per run.
        upstream: the OpenAI-compatible base URL the app would use, or an agentnb model.
        name: the model name shown for the variant.
        serial: one run at a time (default: only for commands).
        timeout: the proxy's seconds per upstream call.
    """

    fn: AppFn | None = None
    command: Sequence[str] | None = None
    upstream: Any = None
    name: str = "app"
    serial: bool | None = None
    timeout: float = 300.0
    _proxy: Any = field(default=None, repr=False)
    _server: Any = field(default=None, repr=False)
    _opening: asyncio.Lock | None = field(default=None, repr=False)
    _serial: asyncio.Lock | None = field(default=None, repr=False)
    _loop: asyncio.AbstractEventLoop | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if (self.fn is None) == (self.command is None):
            raise ConfigurationError("an App needs fn (an async callable) or command, not both")
        if self.fn is not None and not callable(self.fn):
            raise ConfigurationError(f"App fn must be an async callable, not {self.fn!r}")
        if self.upstream is None:
            raise ConfigurationError(
                "an App needs upstream: the OpenAI-compatible base URL it talks to, or an "
                "agentnb model (served for the sweep)"
            )
        if self.serial is None:
            self.serial = self.command is not None

    #: What tables.describe shows for the variant.
    @property
    def instructions(self) -> str:
        return ""

    async def open(self) -> str:
        """Start the proxy (and the model server) once; returns the proxy's base URL."""
        loop = asyncio.get_running_loop()
        if self._opening is None or self._loop is not loop:  # locks belong to one loop
            self._opening, self._serial, self._loop = asyncio.Lock(), asyncio.Lock(), loop
        async with self._opening:
            if self._proxy is None:
                self._proxy = await asyncio.to_thread(self._start)
        return str(self._proxy.base_url)

    def _start(self) -> Any:
        from ..observe import proxy, serve

        upstream = self.upstream
        if not isinstance(upstream, str):
            self._server = serve(upstream)
            upstream = self._server.base_url
        return proxy(upstream, timeout=self.timeout)

    def close(self) -> None:
        """Stop the proxy and the model server (the sweep does, when it ends)."""
        proxy, server, self._proxy, self._server = self._proxy, self._server, None, None
        if proxy is not None:
            proxy.close()
        if server is not None:
            server.close()

    async def run(
        self, task: Task, seed: int, *, tags: dict[str, str] | None = None
    ) -> tuple[RunResult, Session, Any]:
        """One run of ``task``: the result rebuilt from the proxied calls (its record tagged
        with ``tags``, with what its calls spent), its session and the state end-state
        checks read."""
        base_url = await self.open()
        rid = f"ev-{secrets.token_hex(6)}"
        ctx = AppContext(
            base_url, {"x-session-id": rid}, "agentnb-eval", task, seed, tuple(task.history)
        )
        assert self._serial is not None
        if self.serial:
            async with self._serial:
                return await self._run(task, ctx, rid, tags or {})
        return await self._run(task, ctx, rid, tags or {})

    async def _run(
        self, task: Task, ctx: AppContext, rid: str, tags: dict[str, str]
    ) -> tuple[RunResult, Session, Any]:
        seen = len(self._proxy.calls)
        answer: Any = None
        if self.fn is not None:
            answer = await self.fn(task.input, ctx)
        else:
            answer = await self._command(task.input, ctx, rid)
        calls = self._calls(rid, seen)
        session = self._proxy.session(calls[-1].session_id)  # where the run ended
        spent = Spent.of(calls, self._model_name(calls))
        return _result(session, task, rid, answer, spent, tags), session, ctx.state

    async def _command(self, text: str, ctx: AppContext, rid: str) -> str:
        assert self.command is not None
        env = {
            **os.environ,
            "OPENAI_BASE_URL": ctx.base_url,
            "OPENAI_API_KEY": ctx.api_key,
            "AGENTNB_SESSION_ID": rid,
        }
        code, out, err = await run_command(self.command, text, env)
        if code:
            raise AppFailed(f"{self.command[0]} exited with {code}: {err[-500:]}")
        return out.strip()

    def _calls(self, rid: str, seen: int) -> list[Any]:
        """The proxied calls of this run, in the order they came: those of its sessions (by
        ``ctx.headers``), or, one run at a time, every call that came while it ran."""
        calls = self._proxy.calls[seen:]
        mine = [c for c in calls if c.session_id == rid or c.session_id.startswith(rid + ".b")]
        if not mine and self.serial:
            mine = list(calls)
        if not mine:
            raise AppFailed(
                "the proxy saw no call of this run: send ctx.headers with every request "
                "(openai.AsyncOpenAI(..., default_headers=ctx.headers)), or use App(serial=True)"
            )
        return mine

    def _model_name(self, calls: list[Any]) -> str:
        """The model that answered: the upstream agentnb model's name, else the one the
        app's requests named, else the App's ``name``."""
        if not isinstance(self.upstream, str):
            return str(getattr(self.upstream, "name", self.name))
        return next((c.model for c in calls if c.model), self.name)

    def __repr__(self) -> str:
        what = getattr(self.fn, "__qualname__", None) or " ".join(self.command or ())
        return f"<App {what} -> {self.upstream if isinstance(self.upstream, str) else self.name}>"


@dataclass
class Spent:
    """What one run's proxied calls spent: the model, the tokens the upstream reported
    (prompt and completion) and how many calls reported none."""

    model: str
    usage: Usage
    unmetered: int = 0

    @classmethod
    def of(cls, calls: list[Any], model: str) -> Spent:
        usage, unmetered = Usage(), 0
        for call in calls:
            if call.reply is None:  # no reply (an error status, a cut stream): no tokens read
                continue
            if call.reply.usage is None:  # a stream without usage: its spend is unknown
                unmetered += 1
            else:
                usage = usage + call.reply.usage
        return cls(model, usage, unmetered)


def _result(
    session: Session, task: Task, rid: str, answer: Any, spent: Spent, tags: dict[str, str]
) -> RunResult:
    from ..runtime import RunResult

    wires = session.to_openai()
    start = max(
        (
            i
            for i, m in enumerate(wires)
            if m.get("role") == "user" and m.get("content") == task.input
        ),
        default=0,
    )
    last = wires[-1] if wires else {}
    final = last.get("role") == "assistant" and not last.get("tool_calls")
    output = last.get("content") if final else None
    if output is None and isinstance(answer, str):
        output = answer
    record = RunRecord(
        rid,
        rid,
        task.input,
        start=start,
        end=len(wires),
        output=output,
        stop_reason="final_answer" if final else "error",
        detail="" if final else "the app's conversation did not end with a final answer",
        iterations=sum(m.get("role") == "assistant" for m in wires[start:]),
        usage=spent.usage,
        tags=tags,
        model=spent.model,
        unmetered=spent.unmetered,
    )
    return RunResult(record, session, [], list(session.messages)[start:])
