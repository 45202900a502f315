"""A typed function's parameters as a pydantic model: the JSON schema the model sees, and the
validator of its arguments.

Every parameter is a field under an internal name (``p0``, ``p1``, ...) whose alias is the
parameter's own name, so any legal JSON property name is a legal parameter - ``_from``,
``schema``, ``json``, ``copy``, ``validate``, ``model_config`` - without shadowing the model
class's attributes; the model sees and sends the original names, and errors name them.
``Annotated[str, Field(alias="from")]`` advertises a name Python cannot spell.
"""

from __future__ import annotations

import inspect
import json
import re
import warnings
from collections.abc import Callable
from typing import Any, get_type_hints

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PydanticUserError,
    TypeAdapter,
    ValidationError,
    create_model,
)
from pydantic.fields import FieldInfo

from ..errors import ToolDefinitionError
from .results import describe_validation_error
from .schema import InvalidArguments

__all__ = ["Signature"]


class Signature:
    """The arguments model of one function; ``validate`` returns keyword arguments."""

    def __init__(
        self, fn: Callable[..., Any], tool: str, docs: dict[str, str], *, strict: bool = False
    ) -> None:
        self.strict = strict
        #: the arguments model, and its internal field names -> the function's parameter names
        self.model, self._params = _build(fn, tool, docs, strict)
        self._pairs = tuple(self._params.items())
        try:
            schema = self.model.model_json_schema(by_alias=True)
        except PydanticUserError:
            raise _no_json_form(tool, fn) from None
        self.schema = schema

    def validate(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """Keyword arguments for the function, or :class:`InvalidArguments` naming the fields."""
        try:
            if self.strict:  # JSON-mode strictness: "5" is not 5, "2025-01-10" is a date
                model = self.model.model_validate_json(json.dumps(arguments), strict=True)
            else:
                model = self.model.model_validate(arguments)
        except ValidationError as exc:
            raise InvalidArguments(describe_validation_error(exc)) from None
        values = model.__dict__
        return {param: values[field] for field, param in self._pairs}


_JSON_TYPES = (
    "use JSON types (str, int, float, bool, list, dict), enums, Literal, or classes with typed "
    "fields (dataclasses, BaseModel); or give the schema yourself: an.tool(fn, parameters=...)"
)


def _no_json_form(tool: str, fn: Callable[..., Any]) -> ToolDefinitionError:
    """Which parameter has a type with no JSON form, in the user's words (not the library's)."""
    hints = get_type_hints(fn, include_extras=True)
    for pname in inspect.signature(fn).parameters:
        try:
            TypeAdapter(hints[pname]).json_schema()
        except Exception:
            hint = hints[pname]
            shown = hint.__name__ if isinstance(hint, type) else repr(hint).replace("typing.", "")
            return ToolDefinitionError(
                f"parameter {pname!r} of tool {tool!r} has a type with no JSON form ({shown}); "
                + _JSON_TYPES
            )
    return ToolDefinitionError(f"tool {tool!r} cannot be described to a model; " + _JSON_TYPES)


def _build(
    fn: Callable[..., Any], tool: str, docs: dict[str, str], strict: bool
) -> tuple[type[BaseModel], dict[str, str]]:
    try:
        hints = get_type_hints(fn, include_extras=True)
    except Exception as exc:
        raise ToolDefinitionError(f"cannot read the type hints of tool {tool!r}: {exc}") from None
    fields: dict[str, Any] = {}
    params: dict[str, str] = {}
    seen: set[str] = set()
    for i, (pname, param) in enumerate(inspect.signature(fn).parameters.items()):
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise ToolDefinitionError(
                f"tool {tool!r} takes *{pname}: the model needs named parameters "
                "(or give the schema yourself: an.tool(fn, parameters={...}))"
            )
        if param.kind is param.POSITIONAL_ONLY:
            raise ToolDefinitionError(
                f"parameter {pname!r} of tool {tool!r} is positional-only; the model "
                "passes arguments by name (remove the '/' from the signature)"
            )
        if pname not in hints:
            raise ToolDefinitionError(
                f"parameter {pname!r} of tool {tool!r} has no type annotation; the "
                f"model needs a type, e.g. `{pname}: str`"
            )
        hint = hints[pname]
        marks = [m for m in getattr(hint, "__metadata__", ()) if isinstance(m, FieldInfo)]
        default: Any = ... if param.default is param.empty else param.default
        info = default if isinstance(default, FieldInfo) else Field(default=default)
        if marks:  # Annotated[..., Field(...)]: its description and alias count too
            info = FieldInfo.merge_field_infos(*marks, info)
        if not info.description and docs.get(pname):
            info = FieldInfo.merge_field_infos(info, description=docs[pname])
        external = info.alias or pname
        if external in seen:
            raise ToolDefinitionError(f"tool {tool!r} has two parameters named {external!r}")
        seen.add(external)
        info = FieldInfo.merge_field_infos(info, Field(alias=external))
        fields[f"p{i}"] = (hint, info)
        params[f"p{i}"] = pname
    config = ConfigDict(extra="forbid", protected_namespaces=())
    if strict:
        config["strict"] = True
    model_name = "".join(p.capitalize() for p in re.split(r"[_-]", tool)) + "Args"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            model: type[BaseModel] = create_model(model_name, __config__=config, **fields)
        except (PydanticUserError, TypeError, NameError):
            raise _no_json_form(tool, fn) from None
    own = [w for w in caught if _schema_warning(w)]
    for w in caught:  # anything else (a ResourceWarning of an object collected meanwhile)
        if w not in own:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno, source=w.source)
    if own:
        raise ToolDefinitionError(f"tool {tool!r} cannot be described to a model: {own[0].message}")
    return model, params


def _schema_warning(caught: warnings.WarningMessage) -> bool:
    """A warning building the tool's own schema raises: a user warning (a field that shadows
    an attribute, a type with no JSON form) or one of pydantic's own categories. Another
    object's warning meanwhile (a ResourceWarning as the collector finalises an unclosed
    socket, a RuntimeWarning) is not the tool's: it passes through as it came."""
    category = caught.category
    return issubclass(category, UserWarning) or category.__module__.startswith("pydantic")
