"""Agent: instructions, tools, a model and the stop policies - the configuration of a run.

An agent holds no conversation state; that lives in a :class:`~agentnb.Session`. Every
setting is checked when it is set (at construction and on assignment), so a mistake raises
:class:`~agentnb.errors.ConfigurationError` naming the field, never a ``TypeError`` mid-run.
Settings may be changed between steps of a run; the next stage uses the change.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from ._settings import CHECKS, text_setting
from .context import ContextPolicy, DropOldest, KeepAll
from .errors import ConfigurationError, RunStateError
from .events import Event
from .messages import Message, SystemMessage
from .models.base import ModelLike
from .session import Session
from .tokens import DEFAULT_TOKENIZER, Tokenizer
from .tools import Tool, Toolset

if TYPE_CHECKING:
    from .lock import LockPolicy
    from .runtime.check_stop import RunView
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
        stop_when: predicates ``fn(view) -> bool | str`` over a read-only
            :class:`~agentnb.runtime.RunView`; truthy stops with ``custom``.
        final_answer_on_stop: at ``max_iterations``, ask once more with tools disabled.
        parallel_tool_calls: sent to the model when set; ``False`` also runs calls serially.
        tool_timeout: seconds a tool may take unless it sets its own ``timeout`` (None: none).
        model_params: extra request fields (``temperature``, ``max_tokens``, ...).
        context_window, reply_reserve: the token budget of a request (``RequestAssembled``).
        context: the :class:`~agentnb.context.ContextPolicy` choosing the history sent; by
            default everything, or :class:`~agentnb.context.DropOldest` once a window is set.
        tokenizer: counts tokens for budgets; the model's own, else the heuristic.
    """

    name: str
    max_iterations: int
    repeat_limit: int
    token_budget: int | None
    stop_when: list[Callable[[RunView], Any]]
    final_answer_on_stop: bool
    parallel_tool_calls: bool | None
    tool_timeout: float | None
    model_params: dict[str, Any]
    context_window: int | None
    reply_reserve: int

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
        stop_when: Sequence[Callable[[RunView], Any]] = (),
        final_answer_on_stop: bool = False,
        parallel_tool_calls: bool | None = None,
        tool_timeout: float | None = 60.0,
        model_params: dict[str, Any] | None = None,
        context_window: int | None = None,
        reply_reserve: int = 1000,
        context: ContextPolicy | None = None,
        tokenizer: Tokenizer | None = None,
    ) -> None:
        self._tokens_key: tuple[Any, ...] = ()
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
        self.model_params = model_params or {}
        self.context_window = context_window
        self.reply_reserve = reply_reserve
        self.context = context
        self.tokenizer = tokenizer

    def __setattr__(self, field: str, value: Any) -> None:
        check = CHECKS.get(field)
        if check is not None:
            value = check(field, value)
        super().__setattr__(field, value)
        window = self.__dict__.get("context_window")
        reserve = self.__dict__.get("reply_reserve", 0)
        if (
            field in ("context_window", "reply_reserve")
            and window is not None
            and reserve >= window
        ):
            raise ConfigurationError(
                f"reply_reserve ({reserve}) must be smaller than context_window ({window})"
            )

    # -- the parts assemble reads -----------------------------------------------------------
    @property
    def instructions(self) -> str:
        return self._instructions

    @instructions.setter
    def instructions(self, value: str) -> None:
        text_setting("instructions", value)
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
        if not isinstance(value, Toolset | Iterable):
            raise ConfigurationError(f"tools must be a list of tools, got {value!r}")
        self._tools = value if isinstance(value, Toolset) else Toolset(value)

    @property
    def context(self) -> ContextPolicy:
        if self._context is not None:
            return self._context
        return DropOldest() if self.context_window is not None else _KEEP_ALL

    @context.setter
    def context(self, value: ContextPolicy | None) -> None:
        if value is not None and not isinstance(value, ContextPolicy):
            raise ConfigurationError(
                f"context must be a ContextPolicy (with name and select(history, budget)), "
                f"got {value!r}"
            )
        self._context = value

    @property
    def tokenizer(self) -> Tokenizer:
        own = self._tokenizer or getattr(self._model, "tokenizer", None)
        return own if isinstance(own, Tokenizer) else DEFAULT_TOKENIZER

    @tokenizer.setter
    def tokenizer(self, value: Tokenizer | None) -> None:
        if value is not None and not isinstance(value, Tokenizer):
            raise ConfigurationError(f"tokenizer must be a Tokenizer, got {value!r}")
        self._tokenizer = value

    def system_wire(self) -> dict[str, Any] | None:
        """The system message of every request (cached per instructions string)."""
        return self._system.wire() if self._system is not None else None

    def instructions_tokens(self) -> int:
        return self._counts()[0]

    def tools_tokens(self) -> int:
        return self._counts()[1]

    def _counts(self) -> tuple[int, int]:
        tokenizer = self.tokenizer
        key = (self._instructions, id(self._tools), self._tools.version, tokenizer)
        if key != self._tokens_key:
            system = self.system_wire()
            schemas = self._tools.schemas()
            self._tokens_key = key
            self._token_counts = (
                tokenizer.count_message(system) if system else 0,
                tokenizer.count_json(schemas) if schemas else 0,
            )
        return self._token_counts

    # -- running ------------------------------------------------------------------------
    def start(
        self,
        input: Input = None,
        *,
        session: Session | None = None,
        lock_policy: LockPolicy | None = None,
    ) -> Run:
        """A stepper: ``await run.step()`` advances one stage; nothing runs until then."""
        from .runtime.run import Run

        return Run(
            self, input, session if session is not None else Session(), lock_policy=lock_policy
        )

    async def run(
        self,
        input: Input = None,
        *,
        session: Session | None = None,
        lock_policy: LockPolicy | None = None,
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


_KEEP_ALL = KeepAll()
