"""Comparing tool arguments the way a reader would: case, spacing and punctuation aside.

``normalise(value)`` folds strings (case, whitespace, punctuation), numbers (``1 == 1.0``;
a boolean equals only a boolean) and containers recursively; ``canonical(args)`` is the one
JSON text of an argument dict (keys sorted) that recordings and trajectory alignment key on;
``contains_words(text, part)`` is how a check finds a text in an answer: whole words.
"""

from __future__ import annotations

import json
import re
import unicodedata
from typing import Any

__all__ = ["canonical", "contains_words", "matches", "normalise", "words"]


_SEPARATORS = re.compile(r"[\W_]+")  # punctuation, symbols and whitespace, in any script


def _fold(text: str) -> str:
    folded = _SEPARATORS.sub(" ", unicodedata.normalize("NFKC", text).casefold())
    return folded.strip()


_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
# a CJK character alone (those scripts write no spaces), a run of other letters and digits,
# or one symbol (°, $, %, ¥: a unit is part of what was said); punctuation and space divide
_WORD = re.compile(f"[{_CJK}]|(?:(?![{_CJK}])[^\\W_])+|[^\\w\\s]")


_SEP = "\x1f"  # a character no word holds


def words(text: str) -> tuple[str, ...]:
    """``text`` as the words a reader compares: NFKC, no case, punctuation dropped, symbols
    kept one by one, each Chinese or Japanese character (or Korean syllable) a word."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    found = _WORD.findall(folded)
    return tuple(w for w in found if not unicodedata.category(w[0]).startswith("P"))


def contains_words(text: str, part: str) -> bool:
    """True when the words of ``part`` appear in ``text`` one after another, whole: "°C"
    is not in "Chengdu", "300" not in "3000", "Paris" not in "comparison"; "20 °C" has
    "20°C" and "我去北京出差" has "北京". A ``part`` with no words (only punctuation) is in
    no text."""
    needle = words(part)
    if not needle:
        return False
    return _SEP + _SEP.join(needle) + _SEP in _SEP + _SEP.join(words(text)) + _SEP


def normalise(value: Any) -> Any:
    """``value`` with strings folded, numbers as floats and containers normalised inside."""
    if isinstance(value, str):
        return _fold(value)
    if isinstance(value, bool):
        return ("bool", value)  # True is not 1.0 here, though Python says True == 1.0
    if value is None:
        return value
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, dict):
        return {str(k): normalise(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [normalise(v) for v in value]
    return value


def matches(actual: Any, expected: Any) -> bool:
    """True when ``actual`` equals ``expected`` after :func:`normalise`.

    A list ``expected`` for a value that is not a list is a set of accepted values; a dict
    ``expected`` matches a dict ``actual`` holding at least those keys (a subset).
    """
    if isinstance(expected, list | tuple) and not isinstance(actual, list | tuple):
        return any(matches(actual, option) for option in expected)
    if isinstance(expected, dict) and isinstance(actual, dict):
        return all(k in actual and matches(actual[k], v) for k, v in expected.items())
    return bool(normalise(actual) == normalise(expected))


def canonical(arguments: Any) -> str:
    """The one JSON text of a tool call's arguments: keys sorted, no spaces, Chinese kept.

    ``arguments`` is a dict or the raw JSON string a model sent (text that is not JSON is
    kept as it is, so two identical broken calls still compare equal).
    """
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except ValueError:
            return str(arguments)
    from ..tools import to_content

    value = json.loads(to_content(arguments))  # pydantic models, dates ... as JSON
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
