"""Agent: instructions, tools, a model and the stop policies - the configuration of a run.

An agent holds no conversation state; that lives in a :class:`~agentnb.Session`. Every
setting is checked when it is set (at construction and on assignment), so a mistake raises
:class:`~agentnb.errors.ConfigurationError` naming the field, never a ``TypeError`` mid-run.
Settings may be changed between steps of a run; the next stage uses the change.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import inspect
from collections.abc import AsyncIterator, Callable, Coroutine, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ._settings import CHECKS
from .context.policies import ContextPolicy, DropOldest, KeepAll
from .errors import ConfigurationError, RunStateError
from .events import Event
from .messages import Message, SystemMessage
from .models.base import ModelLike
from .runtime.pending import Pending
from .session.records import checked_tags
from .session.session import Session
from .tokens import DEFAULT_TOKENIZER, Tokenizer
from .tools.tool import Tool
from .tools.toolset import Toolset

if TYPE_CHECKING:
    from .runtime.check_stop import RunView
    from .runtime.guard import CallGuard
    from .runtime.run import Run, RunResult
    from .session.lock import LockPolicy
    from .tools.replaying import ReplaySource

__all__ = ["Agent"]

Input = str | Message | dict[str, Any] | None


@dataclass(frozen=True, slots=True)
class Prompt:
    """The fixed part of every request: instructions, tool schemas, their token counts."""

    system: dict[str, Any] | None
    tools: list[dict[str, Any]]
    instructions_tokens: int
    tools_tokens: int
    tokenizer: Tokenizer
    policy: ContextPolicy


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
            Without a ``context_window`` the agent adopts its model's, when the model carries
            one (``model.context_window``: the local SmolLM2 server's model says its 4096),
            so a long run trims its history instead of overflowing the model's window.
        context: the :class:`~agentnb.context.ContextPolicy` choosing the history sent; by
            default everything, or :class:`~agentnb.context.DropOldest` once a window is set.
        tokenizer: counts tokens for budgets; the model's own, else the heuristic.
        replay: what answers this agent's tool calls instead of its tools (set by
            :meth:`replaying`; an evaluation wraps a task's own tools with it too).
        frame_results: ``"delimit"`` sends each tool result between sealed markers and tells
            the model they hold data, never instructions (spotlighting; see
            :mod:`agentnb.context.framing`); the transcript keeps the results unframed.
    """

    name: str
    instructions: str
    model: ModelLike | None
    tools: Toolset
    max_iterations: int
    repeat_limit: int
    token_budget: int | None
    stop_when: list[Callable[[RunView], Any]]
    final_answer_on_stop: bool
    parallel_tool_calls: bool | None
    tool_timeout: float | None
    model_params: dict[str, Any]
    #: The token window of a request: the one given, else the model's (``model.context_window``),
    #: else None (no budget: everything is sent). A plain attribute: assemble reads it per call.
    context_window: int | None
    reply_reserve: int
    replay: ReplaySource | None
    frame_results: str | None

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
        replay: ReplaySource | None = None,
        frame_results: str | None = None,
    ) -> None:
        super().__setattr__("_prompt_key", ())
        self.name = name
        self.instructions = instructions
        self.tools = tools  # type: ignore[assignment]  # converted to a Toolset on set
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
        self.replay = replay
        self.frame_results = frame_results

    def __setattr__(self, field: str, value: Any) -> None:
        check = CHECKS.get(field)
        if check is not None:
            value = check(field, value)
        elif field == "model":
            value = self._checked_model(value)
        elif field == "tools":
            value = self._checked_tools(value)
        if field == "context_window":  # kept as given; the attribute is the window in force
            super().__setattr__("_context_window", value)
            value = value if value is not None else self.__dict__.get("_model_window")
        super().__setattr__(field, value)
        if field == "instructions":
            self._system = SystemMessage(content=value) if value else None
        if not field.startswith("_"):  # a setting changed: prompt() rebuilds
            super().__setattr__("_stamp", self.__dict__.get("_stamp", 0) + 1)
        if field == "model" and "_context_window" in self.__dict__ and self._context_window is None:
            super().__setattr__("context_window", self._model_window)  # the new model's
        if field in ("context_window", "reply_reserve", "model"):
            self._check_reserve()

    def _check_reserve(self) -> None:
        window, reserve = self.__dict__.get("context_window"), self.__dict__.get("reply_reserve")
        if window is None or reserve is None or reserve < window:
            return
        whose = "" if self.__dict__.get("_context_window") is not None else ", the model's"
        raise ConfigurationError(
            f"reply_reserve ({reserve}) must be smaller than context_window ({window}{whose})"
        )

    _stamp: int
    _prompt_key: tuple[Any, ...]
    _prompt: Prompt
    _context_window: int | None

    # -- the parts assemble reads -----------------------------------------------------------
    def _checked_model(self, value: Any) -> ModelLike | None:
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
        own = getattr(value, "tokenizer", None)  # checked here, once, not on every request
        self._model_tokenizer: Tokenizer | None = own if isinstance(own, Tokenizer) else None
        window = getattr(value, "context_window", None)  # the model's own window, if it says
        usable = isinstance(window, int) and not isinstance(window, bool) and window > 0
        self._model_window: int | None = window if usable else None
        return value

    @staticmethod
    def _checked_tools(value: Any) -> Toolset:
        if not isinstance(value, Toolset | Iterable):
            raise ConfigurationError(f"tools must be a list of tools, got {value!r}")
        return value if isinstance(value, Toolset) else Toolset(value)

    @property
    def context(self) -> ContextPolicy:
        if self._context is not None:
            return self._context
        return _DROP_OLDEST if self.context_window is not None else _KEEP_ALL

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
        """Counts tokens for budgets: the one given, else the model's own, else the heuristic."""
        return self._tokenizer or self._model_tokenizer or DEFAULT_TOKENIZER

    @tokenizer.setter
    def tokenizer(self, value: Tokenizer | None) -> None:
        if value is not None and not isinstance(value, Tokenizer):
            raise ConfigurationError(f"tokenizer must be a Tokenizer, got {value!r}")
        self._tokenizer = value

    def system_wire(self) -> dict[str, Any] | None:
        """The system message of every request (cached per instructions string)."""
        return self._system.wire() if self._system is not None else None

    def instructions_tokens(self) -> int:
        return self.prompt().instructions_tokens

    def tools_tokens(self) -> int:
        return self.prompt().tools_tokens

    def prompt(self) -> Prompt:
        """What every request starts with, counted; rebuilt only when a part changed."""
        tools = self.tools
        key = (self._stamp, tools, tools.version)
        if key != self._prompt_key:
            tokenizer, system, schemas = self.tokenizer, self.system_wire(), tools.schemas()
            self._prompt_key = key
            self._prompt = Prompt(
                system,
                schemas,
                tokenizer.count_message(system) if system else 0,
                tokenizer.count_json(schemas) if schemas else 0,
                tokenizer,
                self.context,
            )
        return self._prompt

    # -- running ------------------------------------------------------------------------
    def start(
        self,
        input: Input = None,
        *,
        session: Session | None = None,
        lock_policy: LockPolicy | None = None,
        task_id: str | None = None,
        trace_id: str | None = None,
        interrupted: Iterable[str] = (),
        guard: CallGuard | None = None,
        tags: Mapping[str, str] | None = None,
    ) -> Run:
        """A stepper: ``await run.step()`` advances one stage; nothing runs until then.

        ``task_id`` and ``trace_id`` place the run in a larger whole: every event and the
        run's record carry them (``agentnb.Runtime`` runs each attempt of a task this way, all
        under the task's one trace id). Started with no input on a session that ends in open
        tool calls, the run resumes that round first; ``interrupted`` names the calls that may
        already have run (a crash cut them short): those with side effects are answered
        ``uncertain`` instead of running again. ``guard`` decides the approvals of calls that
        need one and hears of every side-effecting call before it runs
        (:class:`~agentnb.runtime.guard.Approvals` in memory; the service keeps its own).
        ``tags`` say what the run is run as (``{"variant": "a", "task": "t1"}``): they are
        kept on its record in ``session.runs``, where tables group by them.
        """
        from .runtime.run import Run

        return Run(
            self,
            input,
            session if session is not None else Session(),
            lock_policy=lock_policy,
            task_id=task_id,
            trace_id=trace_id,
            interrupted=interrupted,
            guard=guard,
            tags=tags,
        )

    def run(
        self,
        input: Input = None,
        *,
        session: Session | None = None,
        lock_policy: LockPolicy | None = None,
        guard: CallGuard | None = None,
        tags: Mapping[str, str] | None = None,
    ) -> Coroutine[Any, Any, RunResult]:
        """Run the loop to a stop and return the result (``await`` it). ``input=None``
        continues a session (or resumes its open round); ``guard`` decides approvals (see
        :meth:`start`) and ``tags`` label its record (see :meth:`start`). Used without
        ``await``, the call's attributes say to await it."""
        if tags is not None:  # refused at the call, not when awaited
            tags = checked_tags(tags)

        async def run() -> RunResult:  # nothing starts until it is awaited
            run = self.start(
                input, session=session, lock_policy=lock_policy, guard=guard, tags=tags
            )
            return await run.finish()

        return Pending(run(), "agent.run(...)")

    async def stream(
        self,
        input: Input = None,
        *,
        session: Session | None = None,
        tags: Mapping[str, str] | None = None,
    ) -> AsyncIterator[Event]:
        """Yield every event of a run as it happens (deltas, tool progress, the stop).

        Leaving early (``break``, an exception) cancels the run cleanly once this generator
        is closed: use ``contextlib.aclosing`` to close it at once rather than on collection.
        """
        run = self.start(input, session=session, tags=tags)
        async with contextlib.aclosing(run.stream()) as events:
            async for event in events:
                yield event

    def as_tool(
        self, name: str | None = None, description: str | None = None, **options: Any
    ) -> Tool:
        """This agent as a tool of another: each call runs it on a session of its own, kept in
        ``parent_session.subsessions`` under the call's ``ToolFinished.subsession_id``."""
        from .runtime.subagent import subagent_tool

        return subagent_tool(self, name, description, **options)

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

    # -- variants ---------------------------------------------------------------------------
    def copy(self, *, descriptions: dict[str, str] | None = None, **changes: Any) -> Agent:
        """A new agent like this one with ``changes`` applied: a variant to evaluate.

        ``changes`` are constructor arguments (every one this agent was built with is carried
        over, read from the constructor's signature); ``descriptions={tool: text}`` rewrites
        tool descriptions (those tools are copied with the new text in their schema, the
        others shared). The original is untouched.
        """
        unknown = sorted(set(changes) - set(SETTINGS))
        if unknown:
            raise ConfigurationError(
                f"copy() got unknown settings {unknown}; it accepts {', '.join(SETTINGS)} and "
                "descriptions={tool_name: text}"
            )
        settings = {name: self._setting(name) for name in SETTINGS}
        settings.update(changes)
        if descriptions:
            tools = list(Toolset(settings["tools"]))
            missing = sorted(set(descriptions) - {t.name for t in tools})
            if missing:
                raise ConfigurationError(f"descriptions= names unknown tools {missing}")
            settings["tools"] = [
                _described(t, descriptions[t.name]) if t.name in descriptions else t for t in tools
            ]
        return Agent(**settings)

    def _setting(self, name: str) -> Any:
        """The value ``name`` was given (None for a default the agent derives), a fresh
        container where the agent holds a mutable one."""
        if name == "context":  # the properties answer the derived defaults
            return self._context
        if name == "tokenizer":
            return self._tokenizer
        if name == "context_window":  # the one given: a copy with another model adopts its own
            return self.__dict__.get("_context_window")
        value = getattr(self, name)
        if isinstance(value, Toolset | list):
            return list(value)
        return dict(value) if isinstance(value, dict) else value

    def replaying(self, recording: Any, **options: Any) -> Agent:
        """A copy whose tools answer from ``recording`` (an :class:`~agentnb.ToolRecording`)
        and never run. ``options`` (``missing``, ``match``, ``run``) are the recording's: see
        :meth:`agentnb.ToolRecording.source`."""
        from .tools.replaying import replaying

        source = recording.source(**options)
        tools = [replaying(t, source) for t in self.tools]
        return self.copy(tools=tools, name=f"{self.name} (replaying)", replay=source)

    def __repr__(self) -> str:
        model = getattr(self.model, "name", None)
        return (
            f"<Agent {self.name!r}: {len(self.tools)} tools ({', '.join(self.tools.names)}), "
            f"model={model!r}, max_iterations={self.max_iterations}>"
        )


_KEEP_ALL = KeepAll()
_DROP_OLDEST = DropOldest()

#: The settings a copy carries over and ``copy(**changes)`` accepts: the constructor's
#: parameters, read from its signature (a new parameter is carried with no list to update).
SETTINGS: tuple[str, ...] = tuple(inspect.signature(Agent.__init__).parameters)[1:]


def _described(tool: Tool, description: str) -> Tool:
    """A copy of ``tool`` whose schema says ``description`` (the function is the same)."""
    new = copy.copy(tool)
    new.description = description
    new.schema = {
        **tool.schema,
        "function": {**tool.schema["function"], "description": description},
    }
    return new
