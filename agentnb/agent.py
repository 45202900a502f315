"""Agent: instructions, tools, a model and the stop policies - the configuration of a run.

An agent holds no conversation state; that lives in a :class:`~agentnb.Session`. Every
attribute may be changed between steps of a run and the next stage uses the change.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from .errors import ConfigurationError, RunStateError
from .events import Event
from .messages import Message, SystemMessage
from .models.base import ModelLike
from .session import Session
from .tokens import estimate_json_tokens
from .tools import Tool, Toolset

if TYPE_CHECKING:
    from .runtime.run import Run, RunResult

__all__ = ["Agent"]

Input = str | Message | dict[str, Any] | None


class Agent:
    """An LLM agent: ``instructions`` + ``tools`` + ``model`` + stop policies.

    Args:
        instructions: the system prompt, sent first in every request.
        tools: functions (wrapped with :func:`agentnb.tool` if needed) the model may call.
        model: anything with ``complete(request)``; see :mod:`agentnb.models`.
        max_iterations: model calls per run before stopping with ``max_iterations``.
        repeat_limit: stop with ``repeated_action`` after this many identical calls in a row
            (0 disables the check).
        token_budget: stop with ``token_budget`` once the run used this many tokens.
        stop_when: predicates ``fn(run) -> bool | str``; truthy stops with ``custom``.
        final_answer_on_stop: at ``max_iterations``, ask once more with tools disabled.
        parallel_tool_calls: sent to the model when set; ``False`` also runs calls serially.
        tool_timeout: seconds a tool may take unless it sets its own ``timeout``.
        model_params: extra request fields (``temperature``, ``max_tokens``, ...).
        context_window, reply_reserve: the budget shown in ``RequestAssembled.budget``.
    """

    def __init__(
        self,
        instructions: str = "",
        tools: Iterable[Tool | Callable[..., Any]] = (),
        model: ModelLike | None = None,
        *,
        name: str = "agent",
        max_iterations: int = 10,
        repeat_limit: int = 3,
        token_budget: int | None = None,
        stop_when: Sequence[Callable[[Run], Any]] = (),
        final_answer_on_stop: bool = False,
        parallel_tool_calls: bool | None = None,
        tool_timeout: float | None = 60.0,
        model_params: dict[str, Any] | None = None,
        context_window: int | None = None,
        reply_reserve: int = 1000,
    ) -> None:
        if max_iterations < 1:
            raise ConfigurationError(f"max_iterations must be at least 1, got {max_iterations}")
        if repeat_limit < 0:
            raise ConfigurationError(f"repeat_limit must be 0 (off) or more, got {repeat_limit}")
        self.name = name
        self.instructions = instructions
        self.tools = tools
        self.model = model
        self.max_iterations = max_iterations
        self.repeat_limit = repeat_limit
        self.token_budget = token_budget
        self.stop_when = list(stop_when)
        self.final_answer_on_stop = final_answer_on_stop
        self.parallel_tool_calls = parallel_tool_calls
        self.tool_timeout = tool_timeout
        self.model_params: dict[str, Any] = dict(model_params or {})
        self.context_window = context_window
        self.reply_reserve = reply_reserve

    # -- the parts assemble reads -----------------------------------------------------------
    @property
    def instructions(self) -> str:
        return self._instructions

    @instructions.setter
    def instructions(self, value: str) -> None:
        if not isinstance(value, str):
            raise ConfigurationError(f"instructions must be a string, not {type(value).__name__}")
        self._instructions = value
        self._system = SystemMessage(content=value) if value else None

    @property
    def model(self) -> ModelLike | None:
        return self._model

    @model.setter
    def model(self, value: ModelLike | None) -> None:
        if value is not None and not isinstance(value, ModelLike):
            hint = (
                "wrap a function with an.models.FunctionModel(fn)"
                if callable(value)
                else "use an.models.ScriptedModel, FunctionModel or a Model subclass"
            )
            raise ConfigurationError(
                f"{type(value).__name__} is not a model (it needs name, streaming and an async "
                f"complete(request)); {hint}"
            )
        self._model = value

    @property
    def tools(self) -> Toolset:
        return self._tools

    @tools.setter
    def tools(self, value: Iterable[Tool | Callable[..., Any]] | Toolset) -> None:
        self._tools = value if isinstance(value, Toolset) else Toolset(value)
        self._tools_key: tuple[int, int] = (0, -1)
        self._tools_tokens = 0

    def system_wire(self) -> dict[str, Any] | None:
        """The system message of every request (cached per instructions string)."""
        return self._system.wire() if self._system is not None else None

    def instructions_tokens(self) -> int:
        return self._system.tokens if self._system is not None else 0

    def tools_tokens(self) -> int:
        schemas = self._tools.schemas()
        key = (id(schemas), len(schemas))
        if key != self._tools_key:
            self._tools_key = key
            self._tools_tokens = estimate_json_tokens(schemas) if schemas else 0
        return self._tools_tokens

    # -- running ------------------------------------------------------------------------
    def start(
        self, input: Input = None, *, session: Session | None = None, lock_policy: str | None = None
    ) -> Run:
        """A stepper: ``await run.step()`` advances one stage; nothing runs until then."""
        from .runtime.run import Run

        return Run(
            self, input, session if session is not None else Session(), lock_policy=lock_policy
        )

    async def run(
        self, input: Input = None, *, session: Session | None = None, lock_policy: str | None = None
    ) -> RunResult:
        """Run the loop to a stop and return the result. ``input=None`` continues a session."""
        return await self.start(input, session=session, lock_policy=lock_policy).finish()

    async def stream(
        self, input: Input = None, *, session: Session | None = None
    ) -> AsyncIterator[Event]:
        """Yield every event of a run as it happens (deltas, tool progress, the stop).

        Leaving early (``break``, an exception) cancels the run cleanly once this generator
        is closed: use ``contextlib.aclosing`` to close it at once rather than on collection.
        """
        async with contextlib.aclosing(self.start(input, session=session).stream()) as events:
            async for event in events:
                yield event

    def run_sync(self, input: Input = None, *, session: Session | None = None) -> RunResult:
        """``run`` for scripts. Inside Jupyter (a running event loop) use ``await agent.run``."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(self.run(input, session=session))
        raise RunStateError(
            "run_sync() cannot be used inside a running event loop (Jupyter and IPython run "
            "one); write `result = await agent.run(...)` instead"
        )

    def __repr__(self) -> str:
        model = getattr(self.model, "name", None)
        return (
            f"<Agent {self.name!r}: {len(self._tools)} tools ({', '.join(self._tools.names)}), "
            f"model={model!r}, max_iterations={self.max_iterations}>"
        )
