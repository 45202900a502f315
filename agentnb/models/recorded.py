"""Recorded replies: the one format in which a model call is answered from a recording.

A recording is a list of **entries**, one JSON object per line of a JSONL file::

    {"key": "…", "response": {…}, …}

``key`` says which call the entry answers. How it is made is the recording's **key**:

* **by request** (:func:`by_request`): a hash of the request as sent. A cassette
  (:mod:`agentnb.models.replay`) hashes the HTTP request (method, path, query, JSON body);
* **by request and repeat** (:func:`by_repeat`): the same with the repeat index of an
  evaluation's run, so repeats stay independent: the response cache
  (:class:`agentnb.evals.ResponseCache`, the model's identity and the request's messages,
  tools and parameters);
* **by position** (:func:`by_position`): the n-th call, for a saved run's replies fed back in
  order (``an.testing.replay``).

``response`` is what came back: a model's reply (:func:`reply_dict`: ``message`` in OpenAI
shape, ``usage`` as the wire's object of token counts, ``finish_reason``, ``model``) or an HTTP
response (``status``, ``headers``, ``body``: a cassette, whose client code runs again on the
recorded bytes). Other fields ride along (a cassette's ``request`` and ``client``).

:meth:`Replies.find` answers in recorded order: the entries of one key are served one after
the other and the last one repeats (an identical request asked twice gets both recorded
answers). Lines follow the transcript's one character rule (:mod:`agentnb._json`) and are
split on ``\\n`` only. A recording reads its file strictly (a line that is not an entry is a
:class:`~agentnb.errors.ConfigurationError` naming it: a cassette) or leniently (skipped and
listed in ``bad_lines``: a cache, where one torn line must not lose the rest), and writes by
appending a line or by replacing the file atomically.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from .. import _json
from ..errors import ConfigurationError
from ..messages import AssistantMessage, parse_message
from .response import ModelResponse, Usage

__all__ = [
    "Replies",
    "by_position",
    "by_repeat",
    "by_request",
    "reply_dict",
    "reply_of",
]

Entry = dict[str, Any]


def by_request(request: Any) -> str:
    """The key of ``request`` (plain data): 32 hex digits of the SHA-256 of its canonical
    JSON (keys sorted, no spaces, the one character rule)."""
    text = _json.dumps(request, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def by_repeat(request: Any, repeat: int) -> str:
    """The key of ``request`` asked on ``repeat``: the SHA-256 of their JSON (values JSON
    cannot hold by their ``str``)."""
    text = json.dumps([*request, repeat], sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def by_position(n: int) -> str:
    """The key of the ``n``-th call (from 0)."""
    return str(n)


def reply_dict(response: ModelResponse) -> dict[str, Any]:
    """A model's reply as an entry's ``response``."""
    usage = response.usage
    return {
        "message": response.message.to_openai(),
        "usage": None
        if usage is None
        else {
            "prompt_tokens": usage.prompt_tokens,
            "completion_tokens": usage.completion_tokens,
            "total_tokens": usage.total_tokens,
            **({"estimated": True} if usage.estimated else {}),
        },
        "finish_reason": response.finish_reason,
        "model": response.model,
    }


def reply_of(data: dict[str, Any]) -> ModelResponse:
    """The reply an entry's ``response`` holds. ``usage`` is an object of token counts; a
    list ``[prompt, completion, total, estimated]`` (response cache files written before this
    format) reads the same."""
    usage = data.get("usage")
    if isinstance(usage, list):
        usage = Usage(*usage)
    elif usage:
        usage = Usage(**usage)
    message = parse_message(data["message"], where="a recorded reply")
    if not isinstance(message, AssistantMessage):
        raise ValueError(f"a recorded reply is an assistant message, not {message.role!r}")
    return ModelResponse(message, usage or None, data.get("finish_reason"), data.get("model"))


def _checked(entry: Any) -> Entry:
    if not isinstance(entry, dict) or not isinstance(entry.get("key"), str):
        raise ValueError("not an entry: it needs a text key")
    if not isinstance(entry.get("response"), dict):
        raise ValueError("not an entry: its response is not an object")
    return entry


class Replies:
    """Recorded replies (see the module docstring): ``entries`` in recorded order, read from
    ``path`` when given (``strict``: a bad line raises; else it is listed in ``bad_lines``);
    ``check(entry)`` may refuse an entry (raise ``ValueError``, ``KeyError`` or
    ``TypeError``) or return it as it is kept; ``what`` names an entry in errors."""

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        entries: Iterable[Entry] = (),
        *,
        strict: bool = True,
        check: Callable[[Entry], Entry] | None = None,
        what: str = "recorded reply",
    ) -> None:
        self.path = Path(path) if path is not None else None
        self.check = check
        self.what = what
        self.entries: list[Entry] = []
        #: Lines of the file that could not be read: ``(line number, why)``.
        self.bad_lines: list[tuple[int, str]] = []
        self._by_key: dict[str, list[Entry]] = defaultdict(list)
        self._served: dict[str, int] = defaultdict(int)
        for entry in entries:
            self._keep(entry)
        if self.path is not None and self.path.exists():
            self._read(strict)

    def _read(self, strict: bool) -> None:
        assert self.path is not None
        try:
            data = self.path.read_bytes()
            text = data.decode("utf-8") if strict else data.decode("utf-8", "replace")
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigurationError(f"{self.path} cannot be read: {exc}") from None
        for number, line in enumerate(text.split("\n"), 1):  # "\n" only: U+2028 is text
            if not line.strip():
                continue
            try:
                self._keep(json.loads(line))
            except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
                why = f"{type(exc).__name__}: {exc}"[:200]
                if strict:
                    raise ConfigurationError(
                        f"{self.path}:{number}: not a {self.what} ({why})"
                    ) from None
                self.bad_lines.append((number, why))

    def _keep(self, entry: Any) -> Entry:
        kept = _checked(entry)
        if self.check is not None:
            kept = self.check(kept)
        self.entries.append(kept)
        self._by_key[kept["key"]].append(kept)
        return kept

    def find(self, key: str) -> Entry | None:
        """The next recorded entry for ``key`` (the last one again once all were served), or
        None when none was recorded."""
        found = self._by_key.get(key)
        if not found:
            return None
        n = self._served[key]
        self._served[key] = n + 1
        return found[min(n, len(found) - 1)]

    def add(self, entry: Entry, *, rewrite: bool = False) -> Entry:
        """Keep ``entry`` and write it to the file: appended as a line, or (``rewrite``) the
        whole file replaced atomically (a temporary file, a rename)."""
        kept = self._keep(entry)
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if rewrite:
                _json.write_atomically(self.path, "".join(_line(e) for e in self.entries))
            else:
                with self.path.open("a", encoding="utf-8", newline="\n") as f:
                    f.write(_line(kept))
        return kept

    def keys(self) -> list[str]:
        """The keys recorded, in the order first recorded."""
        return list(self._by_key)

    def __len__(self) -> int:
        return len(self.entries)

    def __repr__(self) -> str:
        where = f" at {self.path}" if self.path else ""
        return f"<Replies {len(self.entries)} entries, {len(self._by_key)} keys{where}>"


def _line(entry: Entry) -> str:
    return _json.dumps(entry) + "\n"
