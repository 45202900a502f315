"""A fast yes for arguments that fit a schema given as is: the common part of JSON Schema
2020-12, compiled once per schema into small functions.

jsonschema walks a schema anew on every call, building a resolver per subschema: 28 us for a
small tool and 190 us for one with two dozen fields, per call, on the event loop. Most calls
fit, and that is cheap to confirm: the compiled check says "fits" only where jsonschema would
(each keyword is the specification's rule, the stricter side where Python differs); what it
does not cover - ``oneOf``, ``not``, ``patternProperties``, ``unevaluated*``, anchors, other
documents, a nested ``$id``, other drafts - and every "no" go to jsonschema, which words
the problems: a call that does not fit costs what it did.
"""

from __future__ import annotations

import operator
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote

from .budget import DEADLINE
from .patterns import compile_pattern

__all__ = ["Check", "compile_check"]

#: ``check(value) -> bool``: True only when ``value`` surely fits.
Check = Callable[[Any], bool]


def _yes(value: Any) -> bool:
    return True


def _no(value: Any) -> bool:  # not covered here: jsonschema decides
    return False


def _is_number(v: Any) -> bool:
    return type(v) is int or type(v) is float


def _whole(v: Any) -> bool:
    return type(v) is int or (type(v) is float and v.is_integer())


_TYPES: dict[str, Check] = {
    "string": lambda v: type(v) is str,
    "integer": _whole,
    "number": _is_number,
    "boolean": lambda v: type(v) is bool,
    "null": lambda v: v is None,
    "object": lambda v: type(v) is dict,
    "array": lambda v: type(v) is list,
}

#: Keywords that never make a value invalid.
_NOTES = frozenset(
    [
        "$schema",
        "$comment",
        "$defs",
        "definitions",
        "title",
        "description",
        "default",
        "examples",
        "deprecated",
        "readOnly",
        "writeOnly",
        "contentMediaType",
        "contentEncoding",
        "contentSchema",
    ]
)


def _canonical(value: Any) -> Any:
    """A hashable key equal for JSON-equal values (1 and 1.0 one key; true and 1 two)."""
    if type(value) is bool or value is None or type(value) is str:
        return (type(value).__name__, value)
    if type(value) is float and value.is_integer():
        return ("n", int(value))
    if _is_number(value):
        return ("n", value)
    if type(value) is dict:
        return ("d", frozenset((k, _canonical(v)) for k, v in value.items()))
    if type(value) is list:
        return ("l", tuple(_canonical(v) for v in value))
    raise TypeError(type(value).__name__)  # not JSON: jsonschema decides


def _key(value: Any) -> Any:
    """:func:`_canonical`, or None for what is not JSON (jsonschema then decides)."""
    try:
        return _canonical(value)
    except TypeError:
        return None


class _Compiler:
    def __init__(self, root: dict[str, Any], cls: Any) -> None:
        self.root = root
        self.formats = cls.FORMAT_CHECKER
        self.known = frozenset(cls.VALIDATORS)  # the dialect's keywords (others are notes)
        self.refs: dict[str, list[Check]] = {}

    def compile(self, schema: Any, top: bool = False) -> Check:
        if schema is True:
            return _yes
        if not isinstance(schema, dict) or ("$id" in schema and not top):
            return _no
        checks: list[Check] = []
        for key, value in schema.items():
            if key in _NOTES or (key == "$id" and top):
                continue
            make = _KEYWORDS.get(key)
            if make is None and key not in self.known and not key.startswith("$"):
                continue  # a keyword of no dialect (x-order, nullable): jsonschema ignores it
            made = _no if make is None else make(self, value, schema)
            if made is _no:
                return _no
            if made is not _yes:
                checks.append(made)
        return _all(checks)

    # -- one method per keyword: returns a check, _yes (nothing to check) or _no ------------

    def k_type(self, value: Any, schema: dict[str, Any]) -> Check:
        names = value if isinstance(value, list) else [value]
        found = [_TYPES.get(n) for n in names if isinstance(n, str)]
        if not found or None in found or len(found) != len(names):
            return _no
        checks = [c for c in found if c is not None]
        return checks[0] if len(checks) == 1 else lambda v: any(c(v) for c in checks)

    def k_properties(self, value: Any, schema: dict[str, Any]) -> Check:
        props = [(name, self.compile(sub)) for name, sub in value.items()]
        props = [(name, c) for name, c in props if c is not _yes]

        def properties(v: Any) -> bool:
            if type(v) is dict:
                for name, check in props:
                    if name in v and not check(v[name]):
                        return False
            return True

        return properties

    def k_required(self, value: Any, schema: dict[str, Any]) -> Check:
        names = list(value)
        return lambda v: type(v) is not dict or all(n in v for n in names)

    def k_additionalProperties(self, value: Any, schema: dict[str, Any]) -> Check:
        if "patternProperties" in schema:
            return _no
        known = frozenset(schema.get("properties", ()))
        if value is False:
            return lambda v: type(v) is not dict or known.issuperset(v)
        extra = self.compile(value)
        if extra is _yes:
            return _yes
        return lambda v: type(v) is not dict or all(extra(v[k]) for k in v if k not in known)

    def k_enum(self, value: Any, schema: dict[str, Any]) -> Check:
        keys = {_canonical(option) for option in value}
        return lambda v: _key(v) in keys

    def k_const(self, value: Any, schema: dict[str, Any]) -> Check:
        key = _canonical(value)
        return lambda v: _key(v) == key

    def k_multipleOf(self, value: Any, schema: dict[str, Any]) -> Check:
        if type(value) is not int:
            return _no  # a fractional step: jsonschema's own float rule decides
        return lambda v: not _is_number(v) or (_whole(v) and int(v) % value == 0)

    def k_items(self, value: Any, schema: dict[str, Any]) -> Check:
        if "prefixItems" in schema:
            return _no
        each = self.compile(value)
        return lambda v: type(v) is not list or all(each(item) for item in v)

    def k_uniqueItems(self, value: Any, schema: dict[str, Any]) -> Check:
        if not value:
            return _yes
        return lambda v: type(v) is not list or len({_key(i) for i in v} - {None}) == len(v)

    def k_format(self, value: Any, schema: dict[str, Any]) -> Check:
        formats = self.formats
        return lambda v: formats.conforms(v, value)

    def k_pattern(self, value: Any, schema: dict[str, Any]) -> Check:
        compiled = compile_pattern(value)

        def pattern(v: Any) -> bool:
            if type(v) is not str:
                return True
            left = DEADLINE.get() - time.thread_time()
            try:
                return left > 0 and compiled.search(v, timeout=left) is not None
            except TimeoutError:
                return False  # jsonschema's turn, with what is left of the budget

        return pattern

    def k_allOf(self, value: Any, schema: dict[str, Any]) -> Check:
        checks = [self.compile(s) for s in value]
        return _no if _no in checks else _all([c for c in checks if c is not _yes])

    def k_anyOf(self, value: Any, schema: dict[str, Any]) -> Check:
        checks = [c for c in (self.compile(s) for s in value) if c is not _no]
        if not checks:
            return _no
        return lambda v: any(c(v) for c in checks)  # one branch surely fits: so does anyOf

    def k_ref(self, value: Any, schema: dict[str, Any]) -> Check:
        if not isinstance(value, str) or not (value == "#" or value.startswith("#/")):
            return _no  # another document, or an anchor: jsonschema resolves it
        if value not in self.refs:
            cell: list[Check] = [_no]
            self.refs[value] = cell  # set before compiling: a recursive schema finds it
            target = _pointer(self.root, value[1:])
            cell[0] = _no if target is None else self.compile(target)
        cell = self.refs[value]
        return lambda v: cell[0](v)


def _bound(kind: str, compare: Callable[[Any, Any], bool]) -> Any:
    """A size or number bound: applies to values of one kind, passes every other value."""
    measure: Callable[[Any], Any] = (lambda v: v) if kind == "number" else len
    of_kind = _TYPES[kind]

    def make(compiler: _Compiler, value: Any, schema: dict[str, Any]) -> Check:
        return lambda v: not of_kind(v) or compare(measure(v), value)

    return make


_BOUNDS = {
    "minLength": _bound("string", operator.ge),
    "maxLength": _bound("string", operator.le),
    "minItems": _bound("array", operator.ge),
    "maxItems": _bound("array", operator.le),
    "minProperties": _bound("object", operator.ge),
    "maxProperties": _bound("object", operator.le),
    "minimum": _bound("number", operator.ge),
    "maximum": _bound("number", operator.le),
    "exclusiveMinimum": _bound("number", operator.gt),
    "exclusiveMaximum": _bound("number", operator.lt),
}

_KEYWORDS: dict[str, Callable[[_Compiler, Any, dict[str, Any]], Check]] = {
    **_BOUNDS,
    "$ref": _Compiler.k_ref,
    **{
        name[2:]: method
        for name, method in vars(_Compiler).items()
        if name.startswith("k_") and name != "k_ref"
    },
}


def _all(checks: list[Check]) -> Check:
    if not checks:
        return _yes
    if len(checks) == 1:
        return checks[0]

    def every(v: Any) -> bool:
        for check in checks:  # noqa: SIM110 - a loop: no generator object per call
            if not check(v):
                return False
        return True

    return every


def _pointer(root: Any, pointer: str) -> Any:
    """The subschema a JSON pointer (``/$defs/a``) names, or None."""
    node = root
    for part in pointer.split("/")[1:] if pointer else []:
        part = unquote(part).replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return node


def compile_check(schema: dict[str, Any], cls: Any) -> Check | None:
    """The fast check of ``schema`` for the jsonschema class ``cls``, or None when there is
    none (another draft than 2020-12, or nothing it covers at the top)."""
    import jsonschema

    if cls is not jsonschema.Draft202012Validator:
        return None
    check = _Compiler(schema, cls).compile(schema, top=True)
    return None if check is _no else check
