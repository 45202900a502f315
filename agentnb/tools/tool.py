"""Tools: typed Python functions the model may call.

``@tool`` reads a function's name, docstring and signature and builds the JSON schema the
model sees (per-parameter descriptions from ``Annotated[..., Field(description=...)]`` or
from the docstring's ``Args:`` / ``:param x:`` lines). A :class:`Toolset` holds tools by
name and refuses duplicates. What happens when the model calls one (parsing, validation,
timeouts, structured errors) is the ``execute_tools`` stage in :mod:`agentnb.runtime`.
"""

from __future__ import annotations

import inspect
import re
import warnings
from collections.abc import Callable, Iterable, Iterator
from typing import Any, get_type_hints

from pydantic import BaseModel, ConfigDict, Field, PydanticUserError, create_model
from pydantic.fields import FieldInfo

from ..errors import ToolDefinitionError
from .docstrings import parse_docstring, strip_titles
from .results import ERROR_KINDS, ToolError, describe_validation_error, error_content, to_content

__all__ = [
    "ERROR_KINDS",
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

    Calling a ``Tool`` calls the function, so decorated functions stay usable as before.
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
    ) -> None:
        if not callable(fn):
            raise ToolDefinitionError(f"a tool must be a function, not {type(fn).__name__}")
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
        self.side_effects = side_effects
        self.args_model = self._build_args_model(fn, doc_params)
        self._field_names = tuple(self.args_model.model_fields)
        try:
            schema = self.args_model.model_json_schema()
        except PydanticUserError as exc:
            raise ToolDefinitionError(
                f"tool {self.name!r} has a parameter type with no JSON schema ({exc}); use "
                "JSON types (str, int, float, bool, list, dict), enums, Literal or pydantic models"
            ) from None
        params = strip_titles(schema)
        params.setdefault("properties", {})
        self.parameters: dict[str, Any] = params
        function: dict[str, Any] = {"name": self.name, "description": self.description}
        function["parameters"] = params
        self.schema: dict[str, Any] = {"type": "function", "function": function}
        self.__doc__ = fn.__doc__
        self.__name__ = self.name
        self.__wrapped__ = fn

    def _build_args_model(self, fn: Callable[..., Any], docs: dict[str, str]) -> type[BaseModel]:
        try:
            hints = get_type_hints(fn, include_extras=True)
        except Exception as exc:
            raise ToolDefinitionError(
                f"cannot read the type hints of tool {self.name!r}: {exc}"
            ) from None
        fields: dict[str, Any] = {}
        for pname, param in inspect.signature(fn).parameters.items():
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                raise ToolDefinitionError(
                    f"tool {self.name!r} takes *{pname}: the model needs named parameters"
                )
            if param.kind is param.POSITIONAL_ONLY:
                raise ToolDefinitionError(
                    f"parameter {pname!r} of tool {self.name!r} is positional-only; the model "
                    "passes arguments by name (remove the '/' from the signature)"
                )
            if pname.startswith("_") or pname == "model_config":
                raise ToolDefinitionError(
                    f"parameter {pname!r} of tool {self.name!r} cannot be an argument name "
                    "(names starting with '_' and 'model_config' are reserved); rename it"
                )
            if pname not in hints:
                raise ToolDefinitionError(
                    f"parameter {pname!r} of tool {self.name!r} has no type annotation; the "
                    f"model needs a type, e.g. `{pname}: str`"
                )
            default: Any = ... if param.default is param.empty else param.default
            info: Any
            hint = hints[pname]
            described = any(
                isinstance(m, FieldInfo) and m.description
                for m in getattr(hint, "__metadata__", ())
            )
            doc = None if described else docs.get(pname)
            if isinstance(default, FieldInfo):
                info = default
                if doc and not info.description:
                    info = FieldInfo.merge_field_infos(info, description=doc)
            else:
                info = Field(default=default, description=doc) if doc else default
            fields[pname] = (hint, info)
        config = ConfigDict(extra="forbid", protected_namespaces=())
        model_name = "".join(p.capitalize() for p in re.split(r"[_-]", self.name)) + "Args"
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                model: type[BaseModel] = create_model(model_name, __config__=config, **fields)
            except (PydanticUserError, TypeError, NameError) as exc:
                raise ToolDefinitionError(
                    f"tool {self.name!r} cannot be described to a model: {exc}"
                ) from None
        if caught:
            raise ToolDefinitionError(
                f"tool {self.name!r} cannot be described to a model: {caught[0].message}"
            )
        return model

    def validate(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """Validate parsed arguments; returns keyword arguments or raises ValidationError."""
        model = self.args_model.model_validate(arguments)
        return {name: getattr(model, name) for name in self._field_names}

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
) -> Any:
    """Turn a typed function into a :class:`Tool`. Use bare or with options::

    @an.tool
    def search_weather(city: str, date: str) -> dict: ...

    @an.tool(timeout=5, sequential=True, side_effects=True)
    async def book_hotel(...): ...
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
