"""Record and replay: a cassette of real HTTP exchanges, replayed offline and deterministically.

A cassette is a recording of replies (:mod:`agentnb.models.recorded`, the one format a model
call is answered from), keyed **by request**: one request → response per line, keyed by a
canonical hash of the request (method, path, query and JSON body; never the host, never a
header), each response an HTTP response. Cassettes
are meant to be committed, so nothing secret is written: credential query parameters (by
the client's one case-insensitive rule) are left out, and the request *and* response bodies
go through the recorded model's :class:`~agentnb._secrets.Secrets` before a
line is written (a 401 that echoes the key, a reply that repeats it). Lines are written with
the transcript's one character rule (:mod:`agentnb._json`: U+2028 and lone surrogates are
escapes) and the file is replaced atomically; a line that is not a recorded exchange is a
:class:`~agentnb.errors.ConfigurationError` naming it. It works at the HTTP seam, under
:class:`OpenAIModel`: replaying runs the same client code (profiles, SSE parsing, text
actions) on the recorded bytes::

    cassette = an.models.Cassette("trip.jsonl")
    model = cassette.record(an.models.OpenAIModel("gpt-4o-mini"))  # live, appends each exchange
    model = cassette.replay()                 # offline: the same replies for the same requests

Each line also keeps the client's settings (model, profile, stream, params), so
``replay(path)`` rebuilds an equivalent model. An identical request asked twice gets the
recorded answers in order. A request that is not in the cassette raises
:class:`~agentnb.errors.CassetteMiss` naming how it differs from the closest recording.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx

from .. import _json
from .._secrets import Secrets, is_secret_name
from ..errors import CassetteMiss, ConfigurationError
from .differ import where_differs
from .masking import mask_stream
from .openai.client import OpenAIModel
from .recorded import Replies, by_request

__all__ = ["Cassette", "record", "recorded", "replay"]

_KEPT_HEADERS = ("content-type", "x-request-id", "retry-after")


def _canonical(request: httpx.Request, secrets: Secrets | None = None) -> dict[str, Any]:
    body: Any = None
    if request.content:
        try:
            body = json.loads(request.content)
        except ValueError:
            body = request.content.decode("utf-8", "replace")
    pairs = request.url.params.multi_items()
    query = sorted((k, v) for k, v in pairs if not is_secret_name(k))
    canonical = {"method": request.method, "path": request.url.path, "query": query, "body": body}
    return secrets.mask_data(canonical) if secrets else canonical


def _text(value: Any) -> str:
    return _json.dumps(value, sort_keys=True, separators=(",", ":"))


#: A cassette's key: the canonical request, hashed (:func:`agentnb.models.recorded.by_request`).
request_key = by_request


def _exchange(entry: dict[str, Any]) -> dict[str, Any]:
    """One recorded exchange, checked: a tampered line names itself, typed."""
    request, response = entry["request"], entry["response"]
    ok = isinstance(request, dict) and isinstance(request["path"], str)
    ok = ok and isinstance(response["status"], int) and isinstance(response["body"], str)
    if not ok or not isinstance(response.get("headers", {}), dict):
        raise TypeError("wrong types: not a recorded exchange")
    return entry


class Cassette:
    """The exchanges of one JSONL file (:class:`~agentnb.models.recorded.Replies` keyed by
    request); ``entries`` in recorded order."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.replies = Replies(self.path, check=_exchange, what="recorded exchange")

    @property
    def entries(self) -> list[dict[str, Any]]:
        return self.replies.entries

    def record(self, model: OpenAIModel) -> OpenAIModel:
        """A copy of ``model`` that appends each exchange to this cassette (see :func:`record`)."""
        return record(model, self.path)

    def replay(self, **overrides: Any) -> OpenAIModel:
        """An offline model answering from this cassette (see :func:`replay`)."""
        return replay(self.path, **overrides)

    def append(self, entry: dict[str, Any]) -> None:
        """Add one exchange and rewrite the file atomically (a temporary file, a rename)."""
        self.replies.add(entry, rewrite=True)

    def find(self, canonical: dict[str, Any]) -> dict[str, Any]:
        """The recorded exchange of ``canonical`` (an identical request asked again gets the
        next one); :class:`~agentnb.errors.CassetteMiss` naming how it differs."""
        found = self.replies.find(request_key(canonical))
        if found is None:
            raise CassetteMiss(
                f"request not in cassette {self.path.name} ({len(self.entries)} recorded): "
                + self.difference(canonical),
                difference=self.difference(canonical),
            )
        return found

    def difference(self, canonical: dict[str, Any]) -> str:
        """How ``canonical`` differs from the closest recorded request, in words."""
        same_path = [
            e["request"] for e in self.entries if e["request"]["path"] == canonical["path"]
        ]
        if not same_path:
            return f"nothing was recorded for {canonical['method']} {canonical['path']}"
        body = canonical["body"] if isinstance(canonical["body"], dict) else {}
        messages = body.get("messages") or []

        def common(recorded: dict[str, Any]) -> int:
            theirs = (recorded.get("body") or {}).get("messages") or []
            i = 0  # compared as JSON text: 1 and 1.0 differ, as they do in the key
            while i < min(len(theirs), len(messages)) and _text(theirs[i]) == _text(messages[i]):
                i += 1
            return i

        closest = max(same_path, key=common)
        theirs = closest.get("body") or {}
        i = common(closest)
        other = theirs.get("messages") or []
        if i < len(messages) or i < len(other):
            if i < len(messages) and i < len(other):
                return f"message {i} differs: " + where_differs(
                    other[i], messages[i], f"messages[{i}]"
                )
            now = _short(messages[i]) if i < len(messages) else "(none)"
            then = _short(other[i]) if i < len(other) else "(none)"
            return f"message {i} differs: recorded {then}, now {now}"
        keys = sorted((set(body) | set(theirs)) - {"messages"})
        changed = [k for k in keys if _text(body.get(k)) != _text(theirs.get(k))]
        if changed:
            return "; ".join(where_differs(theirs.get(k), body.get(k), k) for k in changed)
        return f"the query differs: recorded {closest['query']}, now {canonical['query']}"


def _short(value: Any, limit: int = 160) -> str:
    text = _json.dumps(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


class ReplayTransport(httpx.AsyncBaseTransport):
    """Answers from a cassette; never touches the network."""

    def __init__(self, cassette: Cassette) -> None:
        self.cassette = cassette

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        await request.aread()
        entry = self.cassette.find(_canonical(request))
        answer = entry["response"]
        return httpx.Response(
            answer["status"],
            headers=answer.get("headers", {}),
            content=answer["body"].encode("utf-8", "replace"),
        )


class _Tee(httpx.AsyncByteStream):
    """Passes a response body through while keeping a copy; records it once complete."""

    def __init__(self, inner: httpx.Response, done: Any, owned: httpx.AsyncBaseTransport | None):
        self.inner = inner
        self.parts: list[bytes] = []
        self.done = done
        self.owned = owned
        self.complete = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        stream = self.inner.stream
        assert isinstance(stream, httpx.AsyncByteStream)
        async for part in stream:
            self.parts.append(part)
            yield part
        self.complete = True

    async def aclose(self) -> None:
        try:
            stream = self.inner.stream
            if isinstance(stream, httpx.AsyncByteStream):
                await stream.aclose()
        finally:
            if self.owned is not None:
                await self.owned.aclose()
        body = b"".join(self.parts)
        # A stream the reader left at [DONE] is complete; a cut-off one is not recorded.
        if self.complete or b"data: [DONE]" in body[-64:]:
            self.done(body)


class RecordingTransport(httpx.AsyncBaseTransport):
    """Forwards to ``inner`` (else a fresh default transport per request) and records."""

    def __init__(
        self,
        cassette: Cassette,
        client: dict[str, Any],
        inner: httpx.AsyncBaseTransport | None,
        secrets: Secrets | None = None,
    ) -> None:
        self.cassette = cassette
        self.client = client
        self.inner = inner
        self.secrets = secrets or Secrets()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        owned = None if self.inner is not None else httpx.AsyncHTTPTransport()
        transport = self.inner or owned
        assert transport is not None
        await request.aread()
        canonical = _canonical(request, self.secrets)
        try:
            response = await transport.handle_async_request(request)
        except BaseException:
            if owned is not None:
                await owned.aclose()
            raise

        def done(body: bytes) -> None:
            encoding = response.headers.get("content-encoding")
            if encoding:  # keep the decoded body: the replay answers uncompressed
                body = httpx.Response(
                    200, headers={"content-encoding": encoding}, content=body
                ).read()
            headers = {k: v for k, v in response.headers.items() if k.lower() in _KEPT_HEADERS}
            mask = self.secrets.mask
            self.cassette.append(
                {
                    "key": request_key(canonical),
                    "request": canonical,
                    "response": {
                        "status": response.status_code,
                        "headers": {k: mask(v) for k, v in headers.items()},
                        "body": _masked_body(body, headers, self.secrets),
                    },
                    "client": self.secrets.mask_data(self.client),
                }
            )

        return httpx.Response(
            response.status_code, headers=response.headers, stream=_Tee(response, done, owned)
        )


def _masked_body(body: bytes, headers: dict[str, str], secrets: Secrets) -> str:
    """A recorded body with its credentials masked; an event stream's across its events too
    (a key streamed back a few characters per chunk is in no chunk)."""
    kind = next((v for k, v in headers.items() if k.lower() == "content-type"), "")
    if kind.split(";")[0].strip().lower() == "text/event-stream":
        return mask_stream(body, secrets)
    return secrets.mask(body.decode("utf-8", "replace"))


def _settings(model: OpenAIModel) -> dict[str, Any]:
    return {
        "model": model.model,
        "profile": model.profile.name,
        "stream": model.streaming,
        "text_actions": model.text_actions,
        "params": model.params,
        "path": httpx.URL(model.url).path,
    }


def record(model: OpenAIModel, path: str | os.PathLike[str]) -> OpenAIModel:
    """A copy of ``model`` that appends every exchange to the cassette at ``path``."""
    if not isinstance(model, OpenAIModel):
        raise ConfigurationError(f"record() takes an OpenAIModel, not {type(model).__name__}")
    settings = _settings(model)
    return model.with_transport(
        RecordingTransport(Cassette(path), settings, model.transport, model.secrets)
    )


def replay(path: str | os.PathLike[str], **overrides: Any) -> OpenAIModel:
    """An :class:`OpenAIModel` answering from the cassette at ``path``, offline."""
    cassette = Cassette(path)
    if not cassette.entries:
        raise ConfigurationError(f"the cassette {cassette.path} is missing or empty")
    settings = cassette.entries[0].get("client") or {}
    base = str(settings.get("path", "/v1/chat/completions")).rsplit("/chat/completions", 1)[0]
    options: dict[str, Any] = {
        "base_url": f"http://cassette.invalid{base}",
        "profile": settings.get("profile", "generic"),
        "stream": settings.get("stream", False),
        "text_actions": settings.get("text_actions"),
        "params": settings.get("params") or {},
        "api_key": "replay",
        "name": f"replay:{cassette.path.stem}",
    }
    options.update(overrides)
    model = options.pop("model", settings.get("model", "replay"))
    options["transport"] = ReplayTransport(cassette)
    return OpenAIModel(model, **options)


def recorded(name: str) -> Cassette:
    """A cassette of ``data/cassettes`` (or of ``$AGENTNB_CASSETTES``), e.g. for notebooks.

    ``name`` may leave out ``.jsonl``. An installed wheel carries the recorded cassettes too.
    """
    here = Path(__file__).resolve().parent
    roots = [os.environ.get("AGENTNB_CASSETTES"), here.parents[1] / "data", here / "_cassettes"]
    names = [name] if name.endswith(".jsonl") else [name, name + ".jsonl"]
    for root in roots:
        if root:
            candidates = [Path(root) / n for n in names]
            candidates += [Path(root) / "cassettes" / n for n in names]
            for path in candidates:
                if path.is_file():
                    return Cassette(path)
    raise ConfigurationError(
        f"no recorded cassette {name!r}: they live in the repository's data/cassettes "
        "(set AGENTNB_CASSETTES to their folder)"
    )
