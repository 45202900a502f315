"""Tools: typed Python functions the model may call.

``@tool`` reads a function's name, docstring and signature and builds the JSON schema the
model sees (per-parameter descriptions from ``Annotated[..., Field(description=...)]`` or
from the docstring's ``Args:`` / ``:param x:`` lines). A :class:`~.toolset.Toolset` holds
tools by name and refuses duplicates. What happens when the model calls one (parsing, validation,
timeouts, structured errors) is the ``execute_tools`` stage in :mod:`agentnb.runtime`.
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Callable, Mapping
from functools import cached_property, partial
from typing import Any

from ..errors import ToolDefinitionError
from .docstrings import parse_docstring, strip_titles
from .results import (
    ERROR_KINDS,
    MAX_RESULT_CHARS,
    ToolError,
    describe_validation_error,
    error_content,
    serialise,
    to_content,
)
from .schema import InvalidArguments, SchemaValidator, check_callable_with, json_text
from .signature import Signature

__all__ = [
    "ERROR_KINDS",
    "InvalidArguments",
    "Tool",
    "ToolError",
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
    reach a ``**kwargs``). A ``$ref`` in it resolves inside the schema, or against the
    documents given as ``references={uri: schema}``: agentnb never fetches one (a remote
    reference is refused when the tool is made). ``strict=True`` turns off lax coercion for
    typed functions ("5" is not 5); a given schema is always strict. The model reads at most
    ``max_result_chars`` characters of a result (100,000 by default; ``None``: no bound), and
    is told when the rest was cut. Calling a ``Tool`` calls the function, so decorated
    functions stay usable as before.
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
        references: Mapping[str, Any] | None = None,
        max_result_chars: int | None = MAX_RESULT_CHARS,
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
        doc_text, doc_params = "", dict[str, str]()
        if description is None or parameters is None:  # a schema and its words given: skip
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
        if max_result_chars is not None and (
            isinstance(max_result_chars, bool)
            or not isinstance(max_result_chars, int)
            or max_result_chars < 1
        ):
            raise ToolDefinitionError(
                f"max_result_chars of tool {self.name!r} is a whole number >= 1 or None, "
                f"got {max_result_chars!r}"
            )
        #: At most this many characters of a result reach the model (None: no bound).
        self.max_result_chars = max_result_chars
        #: The content of a tool message for a value this tool returned, and a note.
        self.serialise = partial(serialise, limit=max_result_chars)
        self.strict = strict or parameters is not None
        self._check: Signature | SchemaValidator
        if parameters is None:
            self._check = Signature(fn, self.name, doc_params, strict=strict)
            params = strip_titles(self._check.schema)
            params.setdefault("properties", {})
        else:
            text = json_text(parameters, self.name)
            params = json.loads(text)  # a private copy: the caller's dict may change
            self._check = SchemaValidator(params, self.name, references, text=text)
            check_callable_with(fn, params, self.name)
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
        rest = json.loads(
            json_text({k: v for k, v in function.items() if k != "parameters"}, made.name)
        )
        if "parameters" in function:
            rest["parameters"] = made.parameters  # a private copy already
        made.schema = {"type": "function", "function": rest}
        return made

    def validate(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """Keyword arguments for the function, or :class:`InvalidArguments` naming the fields."""
        return self._check.validate(arguments)

    @cached_property
    def hint(self) -> str:
        """How to call this tool, for a model whose arguments did not fit (once per tool):
        ``call book(hotel (string, required), nights (integer))``."""
        props = self.parameters.get("properties")
        props = props if isinstance(props, dict) else {}
        required = self.parameters.get("required")
        required = set(required) if isinstance(required, list) else set()
        parts = []
        for name, spec in props.items():
            kind = spec.get("type") if isinstance(spec, dict) else None
            kind = (
                kind
                if isinstance(kind, str)
                else "/".join(kind)
                if isinstance(kind, list)
                else "value"
            )
            parts.append(f"{name} ({kind}{', required' if name in required else ''})")
        return f"call {self.name} with a JSON object of: " + ", ".join(parts)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(*args, **kwargs)

    def __repr__(self) -> str:
        params = ", ".join(self.parameters.get("properties", {}))
        return f"<Tool {self.name}({params})>"


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
    references: Mapping[str, Any] | None = None,
    max_result_chars: int | None = MAX_RESULT_CHARS,
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
            references=references,
            max_result_chars=max_result_chars,
            approval=approval,
            idempotent=idempotent,
        )

    return wrap(fn) if fn is not None else wrap
