"""``$ref`` in a tool's JSON schema: resolved inside the schema and the documents the user
gives, never fetched, and never a loop.

jsonschema fetches a ``$ref`` to a URL by itself (synchronously, with no timeout, from the
process that validates): a schema from a catalogue or an MCP server could make agentnb
request any address (SSRF) and hang the event loop. Here a schema's references resolve
against the schema itself, the JSON Schema dialects' own meta-schemas (shipped with
jsonschema) and the documents given with ``references={uri: document}``; anything else is
refused when the tool is made, naming the reference and how to supply it. Fetching it is the
caller's decision and the caller's code.

A reference that points to nothing is refused the same way, and so is a cycle that validates
in place without end (``"a": {"$ref": "#/$defs/a"}``, or through ``allOf``/``anyOf``/...):
jsonschema would raise ``RecursionError`` on the first call. A recursive schema that descends
into the arguments (a tree's ``children`` items) is fine.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jsonschema_specifications import REGISTRY as META_SCHEMAS
from referencing import Registry, Resource
from referencing.exceptions import NoSuchAnchor, NoSuchResource, PointerToNowhere, Unresolvable

__all__ = ["DATA", "LIST", "MAP", "ONE", "SchemaProblem", "check", "children", "registry"]


class SchemaProblem(ValueError):
    """What is wrong with a schema, worded to follow "the parameters of tool 'x' ..."."""


def _refuse(uri: str) -> Resource[Any]:
    raise NoSuchResource(ref=uri)  # type: ignore[call-arg]  # an attrs field


def registry(references: Mapping[str, Any], spec: Any) -> Registry[Any]:
    """Where references resolve: the meta-schemas and ``references``; nothing is fetched."""
    given = [
        (uri, Resource.from_contents(doc, default_specification=spec))
        for uri, doc in references.items()
    ]
    refusing: Registry[Any] = Registry(retrieve=_refuse)  # type: ignore[call-arg]  # attrs
    return refusing.combine(META_SCHEMAS).with_resources(given)


#: Where a schema keeps subschemas: one, a list of them, or a map of names to them. Every
#: other keyword's value is walked as it is (it may nest a schema), but for data.
ONE = ("not", "if", "then", "else", "contains", "propertyNames")
LIST = ("allOf", "anyOf", "oneOf", "prefixItems", "items")
MAP = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
#: Keywords whose values are data, not schemas (a "$ref" inside them is text).
DATA = frozenset({"const", "enum", "default", "examples"})
_REFS = ("$ref", "$dynamicRef", "$recursiveRef")
#: Keywords that apply a subschema to the same value (a cycle through them never ends).
_IN_PLACE = ("not", "if", "then", "else")
_IN_PLACE_LISTS = ("allOf", "anyOf", "oneOf")
_IN_PLACE_MAPS = ("dependentSchemas", "dependencies")


def children(node: dict[str, Any]) -> list[Any]:
    """The values under a schema that may be (or hold) subschemas: a map's values (its keys
    are names, never keywords), a list's items, any other keyword's value; never data."""
    found: list[Any] = []
    for key, value in node.items():
        if key in DATA or key in _REFS:
            continue
        if key in MAP and isinstance(value, dict):
            found += value.values()
        elif isinstance(value, list):
            found += value
        else:
            found.append(value)
    return found


def _why(ref: str, exc: Unresolvable) -> str:
    if isinstance(exc, PointerToNowhere | NoSuchAnchor):
        return f"have a reference {ref!r} that points to nothing in the schema"
    return (
        f"refer to another document ({exc.ref!r}, from {ref!r}); agentnb never fetches "
        "schemas: give it with references={uri: schema} (an.Tool(..., references=...), "
        "an.tools.from_mcp(..., references=...)) if you trust it"
    )


def check(schema: Any, reg: Registry[Any], spec: Any) -> None:
    """Raise :class:`SchemaProblem` for a reference that leaves ``reg`` or points to nothing,
    or a cycle of in-place subschemas. Iterative: a deep schema is no RecursionError."""
    edges: dict[int, list[tuple[Any, str]]] = {}
    seen: set[int] = set()
    stack = [(schema, reg.resolver_with_root(spec.create_resource(schema)))]
    while stack:
        node, resolver = stack.pop()
        if not isinstance(node, dict) or id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(spec.id_of(node), str):
            resolver = resolver.in_subresource(spec.create_resource(node))
        out = edges[id(node)] = []
        for key in _REFS:
            if isinstance(ref := node.get(key), str):
                try:
                    target = resolver.lookup(ref)
                except Unresolvable as exc:
                    raise SchemaProblem(_why(ref, exc)) from None
                out.append((target.contents, f"{key} {ref!r}"))
                stack.append((target.contents, target.resolver))
        out += [(node[k], k) for k in _IN_PLACE if isinstance(node.get(k), dict)]
        for k in _IN_PLACE_LISTS:
            out += [(s, k) for s in node.get(k, ()) if isinstance(s, dict)]
        for k in _IN_PLACE_MAPS:
            if isinstance(node.get(k), dict):
                out += [(s, k) for s in node[k].values() if isinstance(s, dict)]
        stack.extend((child, resolver) for child in children(node))
    _no_cycle(edges)


def _no_cycle(edges: dict[int, list[tuple[Any, str]]]) -> None:
    done: set[int] = set()
    for start in edges:
        if start in done:
            continue
        path: list[tuple[int, str]] = []
        on_path: set[int] = set()
        stack: list[tuple[int, str, bool]] = [(start, "", False)]
        while stack:  # depth first, iteratively; (node, label, leaving)
            node, label, leaving = stack.pop()
            if leaving:
                on_path.discard(node)
                path.pop()
                done.add(node)
                continue
            if node in on_path:
                labels = [lab for _, lab in path[[n for n, _ in path].index(node) + 1 :]]
                via = " → ".join([*labels, label])
                raise SchemaProblem(
                    f"refer to themselves without end ({via}): every check of an argument "
                    "would loop; make the reference descend into a property or an item"
                )
            if node in done:
                continue
            on_path.add(node)
            path.append((node, label))
            stack.append((node, label, True))
            stack.extend((id(target), lab, False) for target, lab in edges.get(node, ()))
