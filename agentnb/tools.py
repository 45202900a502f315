"""Tools: typed Python functions the model may call.

``@tool`` reads a function's name, docstring and signature and builds the JSON schema the
model sees (per-parameter descriptions from ``Annotated[..., Field(description=...)]`` or
from the docstring's ``Args:`` / ``:param x:`` lines). A :class:`Toolset` holds tools by
name and refuses duplicates. What happens when the model calls one (parsing, validation,
timeouts, structured errors) is the ``execute_tools`` stage in :mod:`agentnb.runtime`.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import inspect
import json
import re
from collections.abc import Callable, Iterable, Iterator
from decimal import Decimal
from typing import Any, get_type_hints

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model
from pydantic.fields import FieldInfo

from .errors import ToolDefinitionError

__all__ = [
    "Tool",
    "ToolError",
    "Toolset",
    "describe_validation_error",
    "error_content",
    "to_content",
    "tool",
]

_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_SECTION = re.compile(r"^\s*(Args|Arguments|Parameters|Params|Returns|Raises|Examples?)\s*:?\s*$")
_GOOGLE_ARG = re.compile(r"^\s{0,8}(\*{0,2}\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")
_SPHINX_ARG = re.compile(r"^\s*:param\s+(?:\w+\s+)?(\w+)\s*:\s*(.*)$")


class ToolError(Exception):
    """Raise inside a tool to send the model a clear, structured failure.

    The model receives ``{"ok": false, "error": message, "hint": hint, ...}`` and the run
    goes on. Use it for expected failures: unknown city, no seats, upstream timeout.
    """

    def __init__(
        self,
        message: str,
        *,
        hint: str | None = None,
        retryable: bool | None = None,
        data: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.retryable = retryable
        self.data = data or {}


def _jsonable(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, _dt.date | _dt.datetime | _dt.time):
        return value.isoformat()
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    if isinstance(value, Decimal):
        return float(value)
    kind = type(value).__name__
    if kind == "DataFrame":
        return json.loads(value.to_json(orient="records", force_ascii=False, date_format="iso"))
    if kind == "Series":
        return json.loads(value.to_json(force_ascii=False, date_format="iso"))
    if hasattr(value, "item") and callable(value.item):  # numpy scalars
        return value.item()
    raise TypeError(f"{kind} is not JSON serialisable")


# One encoder, built once: json.dumps(..., default=...) would build a new one per call.
_ENCODER = json.JSONEncoder(ensure_ascii=False, default=_jsonable)


def to_content(value: Any) -> str:
    """Serialise a tool's return value into the ``content`` of a tool message.

    Strings pass through; everything else becomes JSON (pydantic models, dataclasses,
    DataFrames as records, dates as ISO strings). Chinese stays readable (no ``\\u`` escapes).
    """
    if isinstance(value, str):
        return value
    return _ENCODER.encode(value)


def error_content(error: str, hint: str | None = None, **extra: Any) -> str:
    """The structured failure the model sees: ``{"ok": false, "error": ..., "hint": ...}``."""
    body: dict[str, Any] = {"ok": False, "error": error}
    if hint:
        body["hint"] = hint
    body.update({k: v for k, v in extra.items() if v is not None})
    return _ENCODER.encode(body)


def _parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """Split a docstring into (description, {parameter: description})."""
    lines = inspect.cleandoc(doc).splitlines()
    description: list[str] = []
    params: dict[str, str] = {}
    section = ""
    current = ""
    for line in lines:
        sphinx = _SPHINX_ARG.match(line)
        if sphinx:
            current, section = sphinx.group(1), "args"
            params[current] = sphinx.group(2).strip()
            continue
        header = _SECTION.match(line)
        if header:
            section = "args" if header.group(1).startswith(("Arg", "Param")) else "other"
            current = ""
            continue
        if section == "args":
            arg = _GOOGLE_ARG.match(line)
            indent = len(line) - len(line.lstrip())
            if arg and (indent <= 8) and not (current and indent > 4 and line.strip()):
                current = arg.group(1).lstrip("*")
                params[current] = arg.group(2).strip()
            elif current and line.strip():
                params[current] = (params[current] + " " + line.strip()).strip()
        elif section == "" and not line.lstrip().startswith(":"):
            description.append(line)
    text = "\n".join(description).strip()
    return text, params


def _strip_titles(schema: Any, in_mapping: bool = False) -> Any:
    if isinstance(schema, dict):
        if in_mapping:
            return {k: _strip_titles(v) for k, v in schema.items()}
        return {
            k: _strip_titles(v, in_mapping=k in ("properties", "$defs"))
            for k, v in schema.items()
            if not (k == "title" and isinstance(v, str))
        }
    if isinstance(schema, list):
        return [_strip_titles(v) for v in schema]
    return schema


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
    ) -> None:
        if not callable(fn):
            raise ToolDefinitionError(f"a tool must be a function, not {type(fn).__name__}")
        self.fn = fn
        self.name: str = name or str(getattr(fn, "__name__", ""))
        if not _NAME.match(self.name):
            raise ToolDefinitionError(
                f"tool name {self.name!r} is not allowed: use 1-64 letters, digits, '_' or '-' "
                "(give one with @an.tool(name=...))"
            )
        doc_text, doc_params = _parse_docstring(inspect.getdoc(fn) or "")
        self.description = description if description is not None else doc_text
        self.is_async = inspect.iscoroutinefunction(fn)
        #: Run a sync function in a worker thread (default) so the event loop stays free and
        #: timeouts apply; ``threaded=False`` calls it inline (cheaper, for instant functions).
        self.threaded = (not self.is_async) if threaded is None else threaded and not self.is_async
        self.timeout = timeout
        self.sequential = sequential
        self.args_model = self._build_args_model(fn, doc_params)
        self._field_names = tuple(self.args_model.model_fields)
        params = _strip_titles(self.args_model.model_json_schema())
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
        config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)
        model_name = "".join(p.capitalize() for p in re.split(r"[_-]", self.name)) + "Args"
        model: type[BaseModel] = create_model(model_name, __config__=config, **fields)
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
) -> Any:
    """Turn a typed function into a :class:`Tool`. Use bare or with options::

    @an.tool
    def search_weather(city: str, date: str) -> dict: ...

    @an.tool(timeout=5, sequential=True)
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
        )

    return wrap(fn) if fn is not None else wrap


class Toolset:
    """Tools by name, in the order given. Refuses two tools with one name."""

    def __init__(self, tools: Iterable[Tool | Callable[..., Any]] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        self._schemas: list[dict[str, Any]] | None = None
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
        return t

    def remove(self, name: str) -> Tool:
        """Remove a tool by name and return it."""
        t = self._tools.pop(name)
        self._schemas = None
        return t

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


def describe_validation_error(exc: ValidationError) -> list[dict[str, str]]:
    """Turn a pydantic error into [{"field": ..., "problem": ...}] a model can act on."""
    problems = []
    for err in exc.errors():
        field = ".".join(str(p) for p in err["loc"]) or "(arguments)"
        kind = err["type"]
        if kind == "missing":
            problem = "required argument is missing"
        elif kind == "extra_forbidden":
            problem = "unexpected argument (not in the schema)"
        else:
            problem = err["msg"]
            if "input" in err and kind not in ("model_type", "dict_type"):
                problem += f" (got {json.dumps(err['input'], ensure_ascii=False, default=str)})"
        problems.append({"field": field, "problem": problem})
    return problems
