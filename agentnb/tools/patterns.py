"""The ``pattern`` keywords of a tool's JSON schema, matched with a bounded engine.

jsonschema matches ``pattern``, ``patternProperties`` (and, through them,
``additionalProperties``) with Python's ``re``, which backtracks without limit and holds the
interpreter while it does: ``^(a+)+$`` against 34 a's and a "!" froze the event loop for over
25 s, and validation runs on the loop before any tool timeout applies. Here those three
keywords match with the `regex <https://pypi.org/project/regex/>`_ engine (the syntax of
``re``, and a timeout): a whole validation may spend at most ``budget.BUDGET`` seconds matching
patterns, after which every pattern it has not checked yet fails with a problem the model
reads ("could not be checked against ... within 0.1 s") - an ``invalid_arguments`` result,
never a frozen loop. A pattern ``re`` accepts but ``regex`` cannot compile is refused when
the tool is made.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from functools import cache
from typing import Any

import regex
from jsonschema.exceptions import ValidationError

from .budget import BUDGET, DEADLINE

__all__ = ["bounded", "compile_pattern"]


@cache
def compile_pattern(pattern: str) -> Any:
    """``pattern`` compiled once by the bounded engine (``regex.error`` when it cannot be)."""
    return regex.compile(pattern)


class _Slow(Exception):
    pass


def _search(pattern: str, text: str) -> bool:
    left = DEADLINE.get() - time.thread_time()
    if left <= 0:
        raise _Slow
    try:
        return compile_pattern(pattern).search(text, timeout=left) is not None
    except TimeoutError:
        raise _Slow from None


def _slow(pattern: str, what: str, path: tuple[str, ...] = ()) -> ValidationError:
    return ValidationError(
        f"{what} could not be checked against the pattern {pattern!r} within {BUDGET:g} s "
        "(the pattern backtracks too much: send a shorter value, or fix the schema)",
        path=path,
        cause=_Slow(),  # an error with a cause says all there is (no "(got ...)" after it)
    )


def pattern(validator: Any, patrn: str, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "string"):
        return
    try:
        if not _search(patrn, instance):
            yield ValidationError(f"{instance!r} does not match {patrn!r}")
    except _Slow:
        yield _slow(patrn, "the value")


def pattern_properties(
    validator: Any, patterns: dict[str, Any], instance: Any, schema: Any
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    for patrn, subschema in patterns.items():
        for key, value in instance.items():
            try:
                hit = _search(patrn, key)
            except _Slow:
                yield _slow(patrn, "the name", (key,))
                continue
            if hit:
                yield from validator.descend(value, subschema, path=key, schema_path=patrn)


def additional_properties(
    validator: Any, extra: Any, instance: Any, schema: Any
) -> Iterator[ValidationError]:
    """jsonschema's ``additionalProperties``, with names matched by the bounded engine; each
    unexpected name is its own error at its own path."""
    if not validator.is_type(instance, "object"):
        return
    known = schema.get("properties", {})
    patterns = schema.get("patternProperties", {})
    for key in instance:
        if key in known:
            continue
        try:
            if any(_search(p, key) for p in patterns):
                continue
        except _Slow:  # patternProperties, beside it, reports the name
            continue
        if validator.is_type(extra, "object"):
            yield from validator.descend(instance[key], extra, path=key)
        elif not extra:
            yield ValidationError(
                "unexpected argument (not in the schema)", path=(key,), instance=instance[key]
            )


_KEYWORDS = {
    "pattern": pattern,
    "patternProperties": pattern_properties,
    "additionalProperties": additional_properties,
}


@cache
def bounded(cls: Any) -> Any:
    """The jsonschema validator class ``cls`` with its pattern keywords bounded."""
    import jsonschema

    return jsonschema.validators.extend(cls, _KEYWORDS)
