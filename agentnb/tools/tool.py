"""Tools: typed Python functions the model may call.

``@tool`` reads a function's name, docstring and signature and builds the JSON schema the
model sees (per-parameter descriptions from ``Annotated[..., Field(description=...)]`` or
from the docstring's ``Args:`` / ``:param x:`` lines). A :class:`Toolset` holds tools by
name and refuses duplicates. What happens when the model calls one (parsing, validation,
timeouts, structured errors) is the ``execute_tools`` stage in :mod:`agentnb.runtime`.
"""

from __future__ import annotations

import copy
import inspect
import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from ..errors import ToolDefinitionError
from .docstrings import parse_docstring, strip_titles
from .results import ERROR_KINDS, ToolError, describe_validation_error, error_content, to_content
from .schema import InvalidArguments, SchemaValidator
from .signature import Signature

__all__ = [
    "ERROR_KINDS",
    "InvalidArguments",
    "Tool",
    "ToolError",
    "Toolset",
    "describe_validation_error",
    "error_content",
    "to_content",
    "tool",
]

_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


class Tool:
    """A function the model can call, with its JSON schema and execution options.

    The schema comes from the function's signature and docstring, or is given as is with
    ``parameters=`` (a JSON schema of an object, e.g. from a catalogue or an MCP server): then
    it is advertised exactly as given, arguments are validated against it (``jsonschema``),
    and the function is called with them as keyword arguments (names Python cannot spell
    reach a ``**kwargs``). ``strict=True`` turns off lax coercion for typed functions ("5" is
    not 5); a given schema is always strict. Calling a ``Tool`` calls the function, so
    decorated functions stay usable as before.
    """

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        timeout: float | None = None,
        threaded: bool | None = None,
        sequential: bool = False,
        isolated: bool = True,
        side_effects: bool | None = None,
        parameters: dict[str, Any] | None = None,
        strict: bool = False,
        approval: bool | Callable[[dict[str, Any]], bool] = False,
        idempotent: bool = False,
    ) -> None:
        if not callable(fn):
            hint = (
                " (a tool given as a JSON schema: an.Tool.from_openai(tool_dict, fn))"
                if isinstance(fn, dict)
                else ""
            )
            raise ToolDefinitionError(f"a tool must be a function, not {type(fn).__name__}{hint}")
        self.fn = fn
        self.name: str = name or str(getattr(fn, "__name__", ""))
        if not _NAME.fullmatch(self.name):
            raise ToolDefinitionError(
                f"tool name {self.name!r} is not allowed: use 1-64 letters, digits, '_' or '-' "
                "(give one with @an.tool(name=...))"
            )
        if inspect.isgeneratorfunction(fn) or inspect.isasyncgenfunction(fn):
            raise ToolDefinitionError(
                f"tool {self.name!r} is a generator function; a tool must return its result "
                "(collect the items into a list and return it)"
            )
        doc_text, doc_params = parse_docstring(inspect.getdoc(fn) or "")
        self.description = description if description is not None else doc_text
        self.is_async = inspect.iscoroutinefunction(fn)
        #: Run a sync function in a worker thread (default) so the event loop stays free and
        #: timeouts apply; ``threaded=False`` calls it inline (cheaper, for instant functions).
        self.threaded = (not self.is_async) if threaded is None else threaded and not self.is_async
        #: Run an async function in a task of its own (default), so that even one that ignores
        #: cancellation cannot outlast its timeout or hold a cancelled run; ``isolated=False``
        #: awaits it in the run's task (cheaper, for tools that let cancellation through).
        self.isolated = isolated
        self.timeout = timeout
        self.sequential = sequential
        #: The call changes the world (books, pays, sends): after a crash it is never re-run
        #: on its own but answered ``uncertain``. None: the toolset's default (False).
        #: ``approval``: a person says yes first; ``idempotent``: it dedupes by its key (guard.py).
        self.side_effects, self.approval, self.idempotent = side_effects, approval, idempotent
        #: Give the function ``an.tools.current_call()`` (its call id, the run's session) while it
        #: runs; off by default, as it costs each call a context switch (``Agent.as_tool`` on).
        self.call_context = False
        self.strict = strict or parameters is not None
        self._check: Signature | SchemaValidator
        if parameters is None:
            self._check = Signature(fn, self.name, doc_params, strict=strict)
            params = strip_titles(self._check.schema)
            params.setdefault("properties", {})
        else:
            params = copy.deepcopy(parameters)  # the caller's dict may change; this one won't
            self._check = SchemaValidator(params, self.name)
            _check_callable_with(fn, params, self.name)
        #: Keyword arguments for the function, or InvalidArguments naming the fields (the
        #: checker's own method: one call less per tool call on the hot path).
        self.validate = self._check.validate  # type: ignore[method-assign]  # (above)
        self.parameters: dict[str, Any] = params
        function: dict[str, Any] = {"name": self.name, "description": self.description}
        function["parameters"] = params
        self.schema: dict[str, Any] = {"type": "function", "function": function}
        self.__doc__ = fn.__doc__
        self.__name__ = self.name
        self.__wrapped__ = fn

    @classmethod
    def from_openai(cls, tool: dict[str, Any], fn: Callable[..., Any], **options: Any) -> Tool:
        """A tool from an OpenAI tool dict (``{"type": "function", "function": {...}}`` or the
        inner ``function`` object), run by ``fn``; the dict is advertised exactly as given."""
        function = tool.get("function", tool) if isinstance(tool, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            raise ToolDefinitionError(
                'an OpenAI tool is {"type": "function", "function": {"name": ..., '
                f'"description": ..., "parameters": {{...}}}}}}, got {tool!r:.200}'
            )
        parameters = function.get("parameters", {"type": "object", "properties": {}})
        made = cls(
            fn,
            name=function["name"],
            description=function.get("description", ""),
            parameters=parameters,
            **options,
        )
        made.schema = {"type": "function", "function": copy.deepcopy(function)}
        made.parameters = made.schema["function"].get("parameters", made.parameters)
        return made

    def validate(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """Keyword arguments for the function, or :class:`InvalidArguments` naming the fields."""
        return self._check.validate(arguments)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(*args, **kwargs)

    def __repr__(self) -> str:
        params = ", ".join(self.parameters.get("properties", {}))
        return f"<Tool {self.name}({params})>"


def _check_callable_with(fn: Callable[..., Any], schema: dict[str, Any], tool: str) -> None:
    """A function given a schema must accept every property and need no other argument."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):  # builtins without a signature: trust the caller
        return
    params = sig.parameters
    if any(p.kind is p.VAR_KEYWORD for p in params.values()):
        accepted = None
    else:
        accepted = {
            n for n, p in params.items() if p.kind not in (p.POSITIONAL_ONLY, p.VAR_POSITIONAL)
        }
    props = set(schema.get("properties", {}))
    if accepted is not None and (extra := sorted(props - accepted)):
        raise ToolDefinitionError(
            f"tool {tool!r}: the function takes no parameter {extra[0]!r} of its schema "
            "(add it, or take **kwargs)"
        )
    needed = [
        n
        for n, p in params.items()
        if p.default is p.empty and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)
    ]
    if missing := [n for n in needed if n not in props]:
        raise ToolDefinitionError(
            f"tool {tool!r}: the function needs {missing[0]!r}, which its schema does not have"
        )


def tool(
    fn: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    description: str | None = None,
    timeout: float | None = None,
    threaded: bool | None = None,
    sequential: bool = False,
    isolated: bool = True,
    side_effects: bool | None = None,
    parameters: dict[str, Any] | None = None,
    strict: bool = False,
    approval: bool | Callable[[dict[str, Any]], bool] = False,
    idempotent: bool = False,
) -> Any:
    """Turn a typed function into a :class:`Tool`. Use bare or with options::

    @an.tool
    def search_weather(city: str, date: str) -> dict: ...

    @an.tool(timeout=5, sequential=True, side_effects=True, strict=True)
    async def book_hotel(...): ...

    an.tool(fn, parameters={"type": "object", ...})   # a JSON schema, advertised as given
    """

    def wrap(f: Callable[..., Any]) -> Tool:
        return Tool(
            f,
            name=name,
            description=description,
            timeout=timeout,
            threaded=threaded,
            sequential=sequential,
            isolated=isolated,
            side_effects=side_effects,
            parameters=parameters,
            strict=strict,
            approval=approval,
            idempotent=idempotent,
        )

    return wrap(fn) if fn is not None else wrap


class Toolset:
    """Tools by name, in the order given. Refuses two tools with one name."""

    def __init__(
        self, tools: Iterable[Tool | Callable[..., Any]] = (), *, side_effects: bool = False
    ) -> None:
        #: Whether a tool that does not say (``side_effects=None``) has side effects.
        self.side_effects = side_effects
        self._tools: dict[str, Tool] = {}
        self._schemas: list[dict[str, Any]] | None = None
        #: Bumped whenever the set changes (token counts and request records key on it).
        self.version = 0
        for t in tools:
            self.add(t)

    def add(self, item: Tool | Callable[..., Any]) -> Tool:
        """Add a tool (a plain function is wrapped with :func:`tool`)."""
        t = item if isinstance(item, Tool) else Tool(item)
        if t.name in self._tools:
            raise ToolDefinitionError(
                f"two tools are named {t.name!r}; tool names must be unique "
                f"(rename one with @an.tool(name=...))"
            )
        self._tools[t.name] = t
        self._schemas = None
        self.version += 1
        return t

    def remove(self, name: str) -> Tool:
        """Remove a tool by name and return it."""
        t = self._tools.pop(name)
        self._schemas = None
        self.version += 1
        return t

    def has_side_effects(self, name: str) -> bool:
        """Whether a call of ``name`` may change the world (unknown tools: False)."""
        t = self._tools.get(name)
        if t is None:
            return False
        return self.side_effects if t.side_effects is None else t.side_effects

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    @property
    def names(self) -> list[str]:
        return list(self._tools)

    def schemas(self) -> list[dict[str, Any]]:
        """The ``tools`` array of a Chat Completions request (cached until the set changes)."""
        if self._schemas is None:
            self._schemas = [t.schema for t in self._tools.values()]
        return self._schemas

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __getitem__(self, name: str) -> Tool:
        return self._tools[name]

    def __repr__(self) -> str:
        return f"Toolset({', '.join(self._tools)})"
