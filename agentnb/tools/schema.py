"""Arguments checked against a JSON schema given as is (a catalogue's, an OpenAI tool dict's,
an MCP server's): the schema the model sees is the one that validates.

``jsonschema`` does the validating (the dialect named by ``$schema``, else 2020-12, with
``format`` checked); each failure becomes ``{"field": "a.b[0]", "problem": ...}`` like those of
typed tools, so the model reads one shape of ``invalid_arguments`` whatever defined the tool.

A schema is data, so its checker is compiled once per distinct schema - keyed by its
canonical JSON (and the ``references`` given with it) - and shared by every tool made from
it: an evaluation that binds its tools per run pays for checking the schema once, not per
run (``scripts/bench_tools.py``). The function a given schema calls must accept each of its
properties and need no other argument (:func:`check_callable_with`).

What the checker will not do: fetch a ``$ref``, loop on a reference cycle
(:mod:`.references`), or backtrack without bound on a ``pattern`` (:mod:`.patterns`); a
schema that needs one of those is refused when the tool is made.
"""

from __future__ import annotations

import inspect
import json
import time
from collections.abc import Callable, Mapping
from functools import lru_cache
from types import FunctionType
from typing import Any

from ..errors import ToolDefinitionError
from .budget import BUDGET, DEADLINE

__all__ = [
    "BUDGET",
    "CACHE_SIZE",
    "DEADLINE",
    "InvalidArguments",
    "SchemaValidator",
    "check_callable_with",
    "json_text",
]

#: How many compiled schemas are kept (least recently used dropped first).
CACHE_SIZE = 1024


class InvalidArguments(ValueError):
    """A call's arguments do not fit its tool: ``problems`` are ``{"field", "problem"}`` rows."""

    def __init__(self, problems: list[dict[str, str]]) -> None:
        super().__init__("; ".join(f"{p['field']}: {p['problem']}" for p in problems))
        self.problems = problems


def _field(path: Any) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(arguments)"


class SchemaValidator:
    """Validates argument objects against one JSON schema (compiled once per distinct schema).

    ``references`` maps the URI of each other document the schema's ``$ref`` points to onto
    that document (a JSON schema): nothing is ever fetched.
    """

    def __init__(
        self,
        schema: dict[str, Any],
        tool_name: str,
        references: Mapping[str, Any] | None = None,
        *,
        text: str | None = None,
    ) -> None:
        if not isinstance(schema, dict) or schema.get("type", "object") != "object":
            raise ToolDefinitionError(
                f"the parameters of tool {tool_name!r} must be a JSON schema of type "
                f"'object' (the model passes arguments by name), got {schema!r:.200}"
            )
        if text is None:  # the schema's JSON text, when the caller has it already
            text = json_text(schema, tool_name)
        refs = json_text(dict(references), tool_name) if references else ""
        try:
            self._validator, self._accept = _checker(text, refs)
        except ValueError as exc:  # references.SchemaProblem: the words follow the tool's name
            raise ToolDefinitionError(f"the parameters of tool {tool_name!r} {exc}") from None

    def problems(self, arguments: dict[str, Any]) -> list[dict[str, str]]:
        token = DEADLINE.set(time.thread_time() + BUDGET)
        try:
            if self._accept is not None and self._accept(arguments):
                return []  # surely fits (see .accept): the common case, in a few microseconds
            errors = sorted(self._validator.iter_errors(arguments), key=lambda e: list(e.path))
        except RecursionError:
            return [_row("(arguments)", "nested too deeply to be checked against the schema")]
        except Exception as exc:  # the model reads why, the run goes on (invariant 3)
            return [_row("(arguments)", f"could not be checked ({type(exc).__name__}: {exc})")]
        finally:
            DEADLINE.reset(token)
        rows = []
        for err in errors:
            field = _field(err.absolute_path)
            if err.validator == "required":
                missing = [n for n in err.validator_value if n not in (err.instance or {})]
                for name in missing:
                    where = f"{field}.{name}" if err.absolute_path else name
                    rows.append(_row(where, "required argument is missing"))
                continue
            if err.validator == "not" and err.validator_value == {}:  # a false subschema
                rows.append(_row(field, "not allowed (the schema accepts no value here)"))
                continue
            if err.validator == "additionalProperties" and not err.validator_value:
                rows.append(_row(field, err.message))  # our own words, one per name
                continue
            got = json.dumps(err.instance, ensure_ascii=False, default=str)
            problem = err.message if len(got) > 80 else f"{err.message} (got {got})"
            if err.cause is not None or err.message.startswith((got, repr(err.instance))):
                problem = err.message  # it names the value already, or says all there is
            rows.append(_row(field, problem))
        return rows

    def validate(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """``arguments`` unchanged when they fit, else :class:`InvalidArguments`."""
        rows = self.problems(arguments)
        if rows:
            raise InvalidArguments(rows)
        return arguments


def json_text(value: Any, tool: str) -> str:
    """A schema as JSON text (as the model will get it): its private copies come from it."""
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as exc:
        raise ToolDefinitionError(f"the schema of tool {tool!r} is not JSON ({exc})") from None


def check_callable_with(fn: Callable[..., Any], schema: dict[str, Any], tool: str) -> None:
    """A function given a schema must accept every property and need no other argument."""
    takes = _takes(fn)
    if takes is None:  # builtins without a signature: trust the caller
        return
    accepted, needed = takes
    props = set(schema.get("properties", {}))
    if accepted is not None and (extra := sorted(props - accepted)):
        raise ToolDefinitionError(
            f"tool {tool!r}: the function takes no parameter {extra[0]!r} of its schema "
            "(add it, or take **kwargs)"
        )
    if missing := [n for n in needed if n not in props]:
        raise ToolDefinitionError(
            f"tool {tool!r}: the function needs {missing[0]!r}, which its schema does not have"
        )


#: (the names a function accepts, None with ``**kwargs``; the names it needs), or None.
_Takes = tuple[frozenset[str] | None, tuple[str, ...]] | None
_TAKES: dict[tuple[Any, ...], _Takes] = {}


def _takes(fn: Callable[..., Any]) -> _Takes:
    """What ``fn`` takes (None when it has no signature). A plain function's answer depends
    only on its code and which defaults it has, so closures made per run (an evaluation's
    tools) share one answer, read once."""
    if type(fn) is not FunctionType or hasattr(fn, "__wrapped__") or hasattr(fn, "__signature__"):
        return _read_takes(fn)
    key = (fn.__code__, len(fn.__defaults__ or ()), frozenset(fn.__kwdefaults__ or ()))
    if key not in _TAKES:
        if len(_TAKES) >= 4096:  # a bound, not a policy: the oldest goes
            del _TAKES[next(iter(_TAKES))]
        _TAKES[key] = _read_takes(fn)
    return _TAKES[key]


def _read_takes(fn: Callable[..., Any]) -> _Takes:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return None
    accepted = None
    if not any(p.kind is p.VAR_KEYWORD for p in params.values()):
        accepted = frozenset(
            n for n, p in params.items() if p.kind not in (p.POSITIONAL_ONLY, p.VAR_POSITIONAL)
        )
    needed = tuple(
        n
        for n, p in params.items()
        if p.default is p.empty and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)
    )
    return accepted, needed


def _row(field: str, problem: str) -> dict[str, str]:
    return {"field": field, "problem": problem}


@lru_cache(maxsize=CACHE_SIZE)
def _checker(text: str, refs: str) -> Any:
    """The checker of a schema's JSON text as given: the one compiled for its canonical form
    (the same schema with its keys in another order shares it)."""
    canonical = [json.loads(text), json.loads(refs) if refs else {}]
    return _compiled(json.dumps(canonical, sort_keys=True, ensure_ascii=False))


@lru_cache(maxsize=CACHE_SIZE)
def _compiled(key: str) -> Any:
    """The checker of a schema, from ``[schema, references]`` as canonical JSON (a private
    copy: no caller can change it afterwards)."""
    import jsonschema  # lazily, with what it needs: `import agentnb` stays light
    from referencing.jsonschema import DRAFT202012, specification_with

    from . import patterns, references
    from .accept import compile_check

    schema, refs = json.loads(key)
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        cls.check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise references.SchemaProblem(
            f"are not a valid JSON schema (at {_field(exc.absolute_path)}: {exc.message})"
        ) from None
    except RecursionError:
        raise references.SchemaProblem("are nested too deeply to be a usable schema") from None
    spec = specification_with(cls.META_SCHEMA.get("$schema", ""), default=DRAFT202012)
    _falses(schema)
    registry = references.registry(refs, spec)
    references.check(schema, registry, spec)
    for text in _patterns(schema):
        try:
            patterns.compile_pattern(text)
        except Exception as exc:  # regex.error: what `re` accepts, the bounded engine may not
            raise references.SchemaProblem(
                f"have a pattern {text!r} the bounded pattern engine cannot compile ({exc})"
            ) from None
    checker = patterns.bounded(cls)
    validator = checker(schema, registry=registry, format_checker=cls.FORMAT_CHECKER)
    return validator, compile_check(schema, cls)


def _falses(schema: dict[str, Any]) -> None:
    """Write each ``false`` subschema as ``{"not": {}}`` (same meaning): jsonschema reports a
    false subschema's failure without its path, so the model could not tell which field. Kept
    as written where the keyword words it well (``additionalProperties: false``, ...)."""
    from .references import LIST, MAP, ONE, children

    stack: list[Any] = [schema]
    while stack:
        node = stack.pop()
        if not isinstance(node, dict):
            continue
        for key, value in node.items():
            if key in ONE and value is False:
                node[key] = {"not": {}}
            elif key in LIST and isinstance(value, list):
                value[:] = [{"not": {}} if v is False else v for v in value]
            elif key in MAP and isinstance(value, dict):
                value.update({k: {"not": {}} for k, v in value.items() if v is False})
        stack += children(node)


def _patterns(schema: Any) -> list[str]:
    """Every pattern of a schema (``pattern`` values, ``patternProperties`` names)."""
    from .references import children

    found: list[str] = []
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if isinstance(node.get("pattern"), str):
                found.append(node["pattern"])
            if isinstance(node.get("patternProperties"), dict):
                found += [str(k) for k in node["patternProperties"]]
            stack += children(node)
    return found
