"""Structured output: the answer's schema on every request, and its validation.

``Agent(output_type=Itinerary)`` turns the type (a pydantic model, a ``TypedDict``, any type
pydantic can validate, or a JSON schema dict) into an :class:`OutputType`: the
:class:`OutputSpec` every request of the agent carries (``request.output``) and the
validation of the final answer.

The spec is the one place a model client reads the requested format from, each writing it
the way its API has (article 002 §5.3, "use the provider's structured-output capability"):

* Chat Completions: ``response_format`` ``{"type": "json_schema", "json_schema": {...}}``
  (:meth:`OutputSpec.chat`; ``OpenAIModel`` sends it, ``ModelRequest.to_openai()`` shows it);
* the Responses API: ``text.format`` (:meth:`OutputSpec.responses`);
* Anthropic Messages: a tool the model is made to call (:meth:`OutputSpec.anthropic_tool`).

A request read off the wire (the stand-in's server, the proxy) gets its spec back from
either of the first two (:meth:`OutputSpec.from_params`). ``schema`` is what is sent:
rewritten into strict mode's subset (:mod:`agentnb.models.strict`) with ``changes`` saying
what changed, or — when strict mode cannot express it — the schema as given, ``strict``
False and ``refused`` saying why. Nothing is changed in silence.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError

from .strict import StrictRewrite, drop_added_nulls, strict_schema

__all__ = ["ANSWER_TOOL", "OutputCheck", "OutputSpec", "OutputType"]

_NAME = re.compile(r"[^a-zA-Z0-9_-]+")

#: How the Anthropic answer tool's description starts (:meth:`OutputSpec.anthropic_tool`): what
#: the model reads to know the tool ends the turn, and what the stand-in's server finds it by
#: when ``tool_choice`` does not name it (``any`` beside the agent's tools, ``auto`` with
#: extended thinking).
ANSWER_TOOL = "Give the final answer with this tool: its input is the answer."


@dataclass(frozen=True, slots=True)
class OutputSpec:
    """The answer format a request asks for (see the module docstring).

    ``schema`` is sent; ``original`` is the schema as given (the answer is validated against
    it); ``changes`` and ``refused`` say how the two differ, and why.
    """

    name: str
    schema: dict[str, Any]
    strict: bool = True
    description: str = ""
    original: dict[str, Any] | None = None
    changes: tuple[str, ...] = ()
    refused: tuple[str, ...] = ()

    @classmethod
    def build(cls, name: str, schema: dict[str, Any], *, strict: bool = True,
              description: str = "") -> tuple[OutputSpec, StrictRewrite | None]:  # fmt: skip
        """A spec for ``schema``: rewritten for strict mode when ``strict`` (and possible)."""
        name = _NAME.sub("_", name)[:64] or "output"
        if not strict:
            return cls(name, schema, False, description, schema), None
        rewrite = strict_schema(schema)
        spec = cls(name, rewrite.schema, rewrite.strict, description, schema, rewrite.changes,
                   rewrite.refused)  # fmt: skip
        return spec, rewrite

    @property
    def notes(self) -> tuple[str, ...]:
        """What a reader should know about the schema sent: its changes, or why not strict."""
        if self.refused:
            return tuple(f"not sent strict: {r}" for r in self.refused)
        return self.changes

    def chat(self) -> dict[str, Any]:
        """Chat Completions' ``response_format``."""
        inner: dict[str, Any] = {"name": self.name, "schema": self.schema, "strict": self.strict}
        if self.description:
            inner["description"] = self.description
        return {"type": "json_schema", "json_schema": inner}

    def responses(self) -> dict[str, Any]:
        """The Responses API's ``text.format``."""
        out: dict[str, Any] = {"type": "json_schema", "name": self.name, "schema": self.schema,
                               "strict": self.strict}  # fmt: skip
        if self.description:
            out["description"] = self.description
        return out

    def anthropic_tool(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """Anthropic Messages: the tool whose input is the answer, and the ``tool_choice``
        that makes the model call it (the answer is that call's ``input``)."""
        about = f"{ANSWER_TOOL} {self.description}" if self.description else ANSWER_TOOL
        tool = {
            "name": self.name,
            "description": about,
            "input_schema": self.original if self.original is not None else self.schema,
        }
        return tool, {"type": "tool", "name": self.name}  # fmt: skip

    @classmethod
    def from_anthropic(
        cls, tools: list[dict[str, Any]], tool_choice: Any
    ) -> tuple[OutputSpec | None, list[dict[str, Any]]]:
        """The spec of an Anthropic request read off the wire (its ``tools`` in the Chat
        Completions shape, as :class:`~agentnb.models.WireRequest` holds them) and the other
        tools: the answer tool is the one ``tool_choice`` forces, else the one whose
        description starts with :data:`ANSWER_TOOL` (None, ``tools``: no answer tool)."""
        forced = tool_choice.get("name") if isinstance(tool_choice, Mapping) and \
            tool_choice.get("type") == "tool" else None  # fmt: skip
        for i, tool in enumerate(tools):
            function = tool.get("function") if isinstance(tool, Mapping) else None
            if not isinstance(function, Mapping) or not isinstance(function.get("parameters"),
                                                                  dict):  # fmt: skip
                continue
            about = str(function.get("description") or "")
            if function.get("name") == forced if forced else about.startswith(ANSWER_TOOL):
                spec = cls(str(function.get("name") or "output"), function["parameters"], False,
                           about.removeprefix(ANSWER_TOOL).strip())  # fmt: skip
                return spec, [*tools[:i], *tools[i + 1 :]]
        return None, tools

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> OutputSpec | None:
        """The spec of a request read off the wire: Chat's ``response_format`` or the
        Responses API's ``text.format`` of type ``json_schema`` (else None)."""
        fmt = params.get("response_format")
        if isinstance(fmt, Mapping) and fmt.get("type") == "json_schema":
            fmt = fmt.get("json_schema")
        else:
            text = params.get("text")
            fmt = text.get("format") if isinstance(text, Mapping) else None
            if not (isinstance(fmt, Mapping) and fmt.get("type") == "json_schema"):
                return None
        if not isinstance(fmt, Mapping) or not isinstance(fmt.get("schema"), dict):
            return None
        return cls(str(fmt.get("name") or "output"), fmt["schema"], bool(fmt.get("strict")),
                   str(fmt.get("description") or ""))  # fmt: skip

    def __repr__(self) -> str:
        how = "strict" if self.strict else "not strict"
        notes = f", {len(self.notes)} notes" if self.notes else ""
        return f"<OutputSpec {self.name!r} {how}{notes}>"


@dataclass(frozen=True, slots=True)
class OutputCheck:
    """One final answer checked against the output type: ``value`` when ``valid``, else
    ``error`` in words (what the correction tells the model)."""

    valid: bool
    value: Any = None
    error: str = ""


class OutputType:
    """What ``Agent(output_type=...)`` keeps: the spec sent and the validator of the answer.

    ``OutputType(Itinerary)`` (a pydantic model), ``OutputType(MyTypedDict)``, any type
    pydantic can validate, or ``OutputType({"type": "object", ...})`` (a JSON schema: the
    answer is checked against it with ``jsonschema``). ``strict=False`` sends the schema as
    given.
    """

    def __init__(self, target: Any, *, name: str | None = None, strict: bool = True,
                 description: str = "") -> None:  # fmt: skip
        self.target = target
        self._adapter: TypeAdapter[Any] | None = None
        if isinstance(target, dict):
            schema, label = target, str(target.get("title") or "output")
        else:
            try:
                self._adapter = TypeAdapter(target)
                schema = self._adapter.json_schema()
            except Exception as exc:  # pydantic says what it cannot validate
                raise TypeError(f"{target!r} is not a type pydantic can validate: {exc}") from None
            label = getattr(target, "__name__", "output")
        doc = description or (schema.get("description") or "")
        self.spec, rewrite = OutputSpec.build(name or label, schema, strict=strict,
                                              description=doc)  # fmt: skip
        self._nulled = rewrite.nulled if rewrite is not None else frozenset()

    def check(self, text: str) -> OutputCheck:
        """Parse and validate a final answer's text."""
        stripped = text.strip()
        try:
            data = json.loads(stripped)
        except ValueError as exc:
            start = f" (it starts {stripped[:40]!r})" if stripped else " (it is empty)"
            return OutputCheck(False, error=f"it is not JSON{start}: {exc}")
        first = self._validate(data)
        if first.valid or not self._nulled:
            return first
        second = self._validate(drop_added_nulls(data, self._nulled))  # null meant "left out"
        return second if second.valid else first

    def _validate(self, data: Any) -> OutputCheck:
        if self._adapter is not None:
            try:
                return OutputCheck(True, self._adapter.validate_python(data))
            except ValidationError as exc:
                return OutputCheck(False, error=_errors(exc))
        problems = _schema_errors(data, self.target)
        return OutputCheck(not problems, data if not problems else None, "; ".join(problems))

    def dump(self, value: Any) -> Any:
        """``value`` as JSON data (a record's, a saved file's)."""
        if isinstance(value, BaseModel):
            return value.model_dump(mode="json")
        if self._adapter is not None:
            return self._adapter.dump_python(value, mode="json")
        return value

    def __repr__(self) -> str:
        return f"<OutputType {self.spec.name!r}: {self.spec!r}>"


def _errors(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:8]:
        where = ".".join(str(p) for p in err["loc"]) or "the answer"
        parts.append(f"{where}: {err['msg']}")
    more = exc.error_count() - len(parts)
    return "; ".join(parts) + (f"; and {more} more" if more > 0 else "")


def _schema_errors(data: Any, schema: dict[str, Any]) -> list[str]:
    import jsonschema  # a core dependency; loaded when a JSON-schema output is first checked

    validator = jsonschema.Draft202012Validator(schema)
    found = sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))
    return [f"{'.'.join(map(str, e.absolute_path)) or 'the answer'}: {e.message}"
            for e in found[:8]]  # fmt: skip
