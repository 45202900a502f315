"""The subset of JSON Schema that strict mode accepts, and the rewrite into it.

OpenAI's strict mode (``response_format`` ``json_schema`` with ``strict: true``, and
``strict`` tool schemas) compiles the schema into a grammar the reply cannot leave, but only
for a subset of JSON Schema: every object lists all its properties in ``required`` and says
``additionalProperties: false``; a handful of keywords per type. :func:`strict_schema`
rewrites a schema into that subset and says, change by change, what it did:

* an object without ``additionalProperties`` gets ``false``;
* an optional property becomes required and nullable (the model writes ``null`` where it
  would have left the key out; :func:`drop_added_nulls` takes those nulls out again before
  the answer is validated against the schema as given);
* a value constraint strict mode does not take (``minLength``, ``uniqueItems``,
  ``default``…) is dropped from the schema sent; the answer is still validated against the
  schema as given, so the constraint still holds;
* ``oneOf`` is sent as ``anyOf`` (the same reason);
* a single-item ``allOf`` is inlined.

What strict mode cannot express at all — a free-form map (``additionalProperties`` true or a
schema, ``patternProperties``), an object without properties, ``not``, ``if``/``then``, a
several-item ``allOf``, tuples (``prefixItems``), a root that is not an object — is
*refused*: :func:`strict_schema` returns the reasons, and the caller sends the schema as
given with ``strict: false`` (never a silently different one).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

__all__ = ["StrictRewrite", "drop_added_nulls", "strict_schema", "strict_tools"]

#: Keywords strict mode takes, per OpenAI's structured-outputs guide.
KEPT = frozenset(
    (
        "type", "properties", "required", "additionalProperties", "items", "enum", "const",
        "anyOf", "$ref", "$defs", "definitions", "description", "title", "pattern", "format",
        "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
        "minItems", "maxItems",
    )
)  # fmt: skip
#: Constraints dropped from the schema sent (the answer is still validated against them).
DROPPED = frozenset(
    (
        "minLength", "maxLength", "uniqueItems", "minProperties", "maxProperties", "default",
        "examples", "readOnly", "writeOnly", "deprecated", "contentEncoding",
        "contentMediaType", "$schema", "$id", "$comment", "discriminator",
    )
)  # fmt: skip
#: Keywords whose meaning strict mode cannot carry: the schema is refused.
REFUSED = {
    "not": "'not' (a negated schema)",
    "if": "'if'/'then'/'else'",
    "then": "'if'/'then'/'else'",
    "else": "'if'/'then'/'else'",
    "patternProperties": "'patternProperties' (a free-form map)",
    "prefixItems": "'prefixItems' (a tuple)",
    "dependentRequired": "'dependentRequired'",
    "dependentSchemas": "'dependentSchemas'",
    "unevaluatedProperties": "'unevaluatedProperties'",
    "propertyNames": "'propertyNames'",
    "contains": "'contains'",
}


@dataclass(frozen=True, slots=True)
class StrictRewrite:
    """The outcome of :func:`strict_schema`: the schema to send, and why it is what it is.

    ``refused`` empty: ``schema`` is the strict rewrite and ``changes`` says what changed.
    ``refused`` not empty: strict mode cannot express the schema; ``schema`` is the one given,
    unchanged, to be sent with ``strict: false``.
    """

    schema: dict[str, Any]
    changes: tuple[str, ...]
    refused: tuple[str, ...]
    #: The paths of the properties made required and nullable (for :func:`drop_added_nulls`).
    nulled: frozenset[tuple[str, ...]] = frozenset()

    @property
    def strict(self) -> bool:
        return not self.refused


def strict_schema(schema: dict[str, Any], *, root_object: bool = True) -> StrictRewrite:
    """``schema`` rewritten into the subset strict mode accepts (see the module docstring).

    ``root_object``: the root must be an object (``response_format`` and tool parameters).
    The schema given is never changed.
    """
    walk = _Walk()
    out = copy.deepcopy(schema)
    if root_object and out.get("type") != "object" and "$ref" not in out:
        walk.refused.append(f"$: the root is {out.get('type', 'untyped')!r}, not an object")
    walk.node(out, "$", ())
    if walk.refused:
        return StrictRewrite(schema, (), tuple(dict.fromkeys(walk.refused)))
    return StrictRewrite(out, tuple(walk.changes), (), frozenset(walk.nulled))


class _Walk:
    def __init__(self) -> None:
        self.changes: list[str] = []
        self.refused: list[str] = []
        self.nulled: set[tuple[str, ...]] = set()

    def node(self, node: Any, where: str, path: tuple[str, ...]) -> None:
        if not isinstance(node, dict):
            return
        for key in list(node):
            if key in REFUSED:
                self.refused.append(f"{where}: {REFUSED[key]} has no strict form")
            elif key in DROPPED:
                del node[key]
                self.changes.append(
                    f"{where}: dropped {key!r} (strict mode does not take it; "
                    "the answer is still checked against it)"
                )
            elif key not in KEPT and key not in ("oneOf", "allOf"):
                del node[key]
                self.changes.append(f"{where}: dropped the unknown keyword {key!r}")
        if "oneOf" in node:
            node["anyOf"] = [*node.get("anyOf", []), *node.pop("oneOf")]
            self.changes.append(
                f"{where}: 'oneOf' sent as 'anyOf' (the answer is still checked against 'oneOf')"
            )
        if "allOf" in node:
            parts = node.pop("allOf")
            if len(parts) == 1 and isinstance(parts[0], dict) and not set(parts[0]) & set(node):
                node.update(parts[0])
                self.changes.append(f"{where}: a one-item 'allOf' inlined")
            else:
                self.refused.append(f"{where}: 'allOf' of {len(parts)} schemas has no strict form")
        for name in ("$defs", "definitions"):
            for key, sub in (node.get(name) or {}).items():
                self.node(sub, f"{where}.{name}.{key}", (f"{name}/{key}",))
        for i, sub in enumerate(node.get("anyOf") or ()):
            self.node(sub, f"{where}.anyOf[{i}]", path)
        if "items" in node:
            self.node(node["items"], f"{where}.items", (*path, "[]"))
        if node.get("type") == "object" or "properties" in node:
            self.object(node, where, path)

    def object(self, node: dict[str, Any], where: str, path: tuple[str, ...]) -> None:
        extra = node.get("additionalProperties")
        props = node.get("properties")
        if extra not in (None, False):
            self.refused.append(
                f"{where}: a free-form map (additionalProperties {extra!r}) has no strict form"
            )
            return
        if not isinstance(props, dict):
            self.refused.append(
                f"{where}: an object without properties (a free-form object) has no strict form"
            )
            return
        if extra is None:
            node["additionalProperties"] = False
            self.changes.append(f"{where}: additionalProperties set to false")
        required = list(node.get("required") or ())
        for name, sub in props.items():
            self.node(sub, f"{where}.{name}", (*path, name))
            if name not in required:
                required.append(name)
                if isinstance(sub, dict) and not _nullable(sub):
                    props[name] = _with_null(sub)
                    self.nulled.add((*path, name))
                self.changes.append(
                    f"{where}: optional {name!r} made required and nullable "
                    "(null stands for 'left out')"
                )
        node["required"] = required


def _nullable(schema: dict[str, Any]) -> bool:
    kind = schema.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    return any(isinstance(s, dict) and _nullable(s) for s in schema.get("anyOf") or ())


def _with_null(schema: dict[str, Any]) -> dict[str, Any]:
    kind = schema.get("type")
    if isinstance(kind, str) and "$ref" not in schema and "anyOf" not in schema:
        out = {**schema, "type": [kind, "null"]}
        if "enum" in out:
            out["enum"] = [*out["enum"], None]
        return out
    if isinstance(kind, list):
        return {**schema, "type": [*kind, "null"]}
    return {"anyOf": [schema, {"type": "null"}]}


def drop_added_nulls(value: Any, nulled: frozenset[tuple[str, ...]]) -> Any:
    """``value`` without the ``null``s written for properties the rewrite made nullable (the
    model's way of leaving them out): what the schema as given validates."""
    if not nulled:
        return value
    return _drop(value, (), nulled, {p[0] for p in nulled if p[0].startswith(("$defs/", "def"))})


def _drop(value: Any, path: tuple[str, ...], nulled: frozenset[tuple[str, ...]],
          defs: set[str]) -> Any:  # fmt: skip
    if isinstance(value, list):
        return [_drop(v, (*path, "[]"), nulled, defs) for v in value]
    if not isinstance(value, dict):
        return value
    out: dict[str, Any] = {}
    for key, sub in value.items():
        here = (*path, key)
        if sub is None and (here in nulled or _in_defs(key, nulled, defs)):
            continue
        out[key] = _drop(sub, here, nulled, defs)
    return out


def _in_defs(key: str, nulled: frozenset[tuple[str, ...]], defs: set[str]) -> bool:
    """A property of a ``$defs`` model made nullable: matched by name (a model's objects are
    reached through ``$ref``s, whose paths the value does not carry)."""
    return any((d, key) in nulled for d in defs)


def strict_tools(tools: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[str]]:
    """Chat tool schemas with ``strict: true`` where strict mode can take them as they mean.

    A tool already saying ``strict`` is left as it is. A tool whose parameters strict mode
    cannot express, or that has optional parameters (strict mode would make them required and
    the tool would receive ``null``), is sent unchanged; the notes say which and why.
    """
    sent: list[dict[str, Any]] = []
    notes: list[str] = []
    for tool in tools:
        fn = tool.get("function")
        if tool.get("type") != "function" or not isinstance(fn, dict) or "strict" in fn:
            sent.append(tool)
            continue
        name = fn.get("name", "?")
        rewrite = strict_schema(fn.get("parameters") or {"type": "object", "properties": {}})
        if rewrite.refused:
            notes.append(f"tool {name} not sent strict: {'; '.join(rewrite.refused)}")
        elif rewrite.nulled:
            optional = ", ".join(sorted(p[-1] for p in rewrite.nulled))
            notes.append(f"tool {name} not sent strict: its optional parameters ({optional}) "
                         "would become required, and arrive as null")  # fmt: skip
        else:
            sent.append({**tool, "function": {**fn, "parameters": rewrite.schema, "strict": True}})
            changed = f" ({'; '.join(rewrite.changes)})" if rewrite.changes else ""
            notes.append(f"tool {name} sent strict{changed}")
            continue
        sent.append(tool)
    return sent, notes
