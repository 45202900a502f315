"""What goes back to the app: the upstream's bytes, its headers, or an error in its format.

A recorded reply goes back as it came (decoded: its headers say so), and is recorded on the
way: a whole one once read (:func:`recorded_whole`), a stream chunk by chunk, each chunk
read only after the app has it - but the chunk with the format's last event, which is read
first, so the session holds the reply by the time the app's SDK returns
(:func:`recorded_stream`). Both stop at the proxy's size limit with an error in the app's
format; what a call keeps is bounded by the same limit.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

import httpx
from starlette.responses import JSONResponse, Response

from ..models import Secrets, SSEEvent, SSEFramer, StreamMask

if TYPE_CHECKING:
    from .calls import ProxiedCall
    from .recorder import Recorder
    from .wire import Wire

__all__ = [
    "HOP",
    "Stream",
    "TooLarge",
    "back_headers",
    "gateway_error",
    "read_bounded",
    "recorded_stream",
    "recorded_whole",
    "relay",
]

#: In a streamed chunk, the event that ends a reply in each format.
_LAST_EVENT = {"chat": b"[DONE]", "responses": b"response.completed", "anthropic": b"message_stop"}

#: Not forwarded either way (hop-by-hop, or recomputed by the server that sends).
HOP = frozenset(
    (
        "host",
        "connection",
        "keep-alive",
        "transfer-encoding",
        "te",
        "trailer",
        "upgrade",
        "proxy-authorization",
        "proxy-connection",
        "content-length",
    )
)


class TooLarge(Exception):
    """A reply larger than the proxy's ``max_response_bytes``."""


class Stream(Response):
    """A streamed body sent straight to the ASGI server, one message per upstream chunk.

    Leaner than ``StreamingResponse`` (no task group per response): the app's disconnect is
    noticed through one pending ``receive()``, checked between chunks.
    """

    def __init__(self, parts: AsyncIterator[bytes], status: int, headers: dict[str, str]):
        self.parts = parts
        self.status_code = status
        self.background = None
        self.init_headers(headers)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        gone = asyncio.ensure_future(receive())  # answers http.disconnect when the app leaves
        parts = self.parts
        start = {
            "type": "http.response.start",
            "status": self.status_code,
            "headers": self.raw_headers,
        }
        try:
            await send(start)
            async for part in parts:
                await send({"type": "http.response.body", "body": part, "more_body": True})
                if gone.done():
                    break
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            gone.cancel()
            await parts.aclose()  # type: ignore[attr-defined]


async def relay(answer: httpx.Response) -> AsyncIterator[bytes]:
    """The upstream's bytes as they came (compressed ones stay compressed)."""
    try:
        async for part in answer.aiter_raw():
            yield part
    finally:
        await answer.aclose()


async def read_bounded(answer: httpx.Response, limit: int) -> bytes:
    """The decoded body, at most ``limit`` bytes (counted after decompression: a gzip bomb
    stops at the limit); past it :class:`TooLarge`. The response is closed either way."""
    parts: list[bytes] = []
    size = 0
    try:
        async for part in answer.aiter_bytes():
            size += len(part)
            if size > limit:
                raise TooLarge(
                    f"the reply is larger than max_response_bytes={limit:,} bytes (counted "
                    "after decompression); it was not read further"
                )
            parts.append(part)
    finally:
        await answer.aclose()
    return b"".join(parts)


def back_headers(answer: httpx.Response, *, decoded: bool = False) -> dict[str, str]:
    """The upstream's headers for the app; with ``decoded`` (the body is sent decompressed)
    without ``content-encoding``: headers always match the body forwarded."""
    drop = HOP | {"content-encoding"} if decoded else HOP
    return {k: v for k, v in answer.headers.items() if k.lower() not in drop}


def gateway_error(exc: httpx.HTTPError, wire: Wire | None = None) -> Response:
    """502 (the upstream failed) or 504 (it timed out), in the app's format when known."""
    timeout = isinstance(exc, httpx.TimeoutException)
    kind = "upstream_timeout" if timeout else "upstream_unreachable"
    message = f"agentnb proxy: the upstream {'timed out' if timeout else 'failed'}: {exc!r}"
    body = (
        wire.error(message, kind)
        if wire is not None
        else {"error": {"message": message, "type": kind, "code": kind}}
    )
    return JSONResponse(body, status_code=504 if timeout else 502)


async def recorded_whole(
    call: ProxiedCall, answer: httpx.Response, wire: Wire, recorder: Recorder, limit: int
) -> Response:
    """A whole reply (or an error status): read bounded, recorded, sent on decoded."""
    call.stream = False
    try:
        content = await read_bounded(answer, limit)
    except TooLarge as exc:
        recorder.fail(call, str(exc), answer.status_code)
        return JSONResponse(wire.error(f"agentnb proxy: {exc}", "response_too_large"), 502)
    except httpx.HTTPError as exc:
        recorder.fail(call, f"{type(exc).__name__}: {exc}", answer.status_code)
        return gateway_error(exc, wire)
    call.response = call.secrets.mask(content.decode("utf-8", "replace"))
    status = answer.status_code
    if status >= 400:
        recorder.fail(call, f"HTTP {status}: {call.response[:500]}", status)
    else:
        try:
            reply = wire.read_reply(json.loads(call.response))
        except Exception as exc:
            recorder.fail(call, f"the upstream reply could not be read: {exc}", status)
        else:
            recorder.finish(call, status, reply)
    return Response(content, status_code=status, headers=back_headers(answer, decoded=True))


async def recorded_stream(
    call: ProxiedCall, answer: httpx.Response, wire: Wire, recorder: Recorder, limit: int
) -> AsyncIterator[bytes]:
    """The stream to the app, recorded as it passes (see the module docstring)."""
    last, status = _LAST_EVENT[wire.name], answer.status_code
    reader, tape, size = wire.stream(), _Tape(call.secrets, last), 0
    broken: list[str] = []

    def read(part: bytes) -> None:
        for shown in tape.feed(part):
            try:
                recorder.deltas(call, reader.feed(shown.name, call.secrets.mask(shown.data)))
            except Exception as exc:  # an error event, or not the format: the app sees it all
                broken.append(f"the upstream stream could not be read: {exc}")
                tape.stop()
                return

    def keep() -> None:
        call.response = tape.response()

    def end() -> None:
        if call.done:
            return
        for shown in tape.close():
            with contextlib.suppress(Exception):
                recorder.deltas(call, reader.feed(shown.name, call.secrets.mask(shown.data)))
        keep()
        if broken:
            recorder.fail(call, broken[0], status)
        elif not reader.done:
            recorder.fail(call, "the stream broke off before its last event", status)
        else:
            try:
                reply = reader.reply()
            except Exception as exc:
                recorder.fail(call, f"the streamed reply could not be read: {exc}", status)
            else:
                recorder.finish(call, status, reply)

    try:
        async for part in answer.aiter_bytes():
            size += len(part)
            if size > limit:
                message = (
                    f"the reply is larger than max_response_bytes={limit:,} bytes (counted "
                    "after decompression); it was cut here"
                )
                keep()
                recorder.fail(call, message, status)
                yield wire.error_event(f"agentnb proxy: {message}", "response_too_large")
                return
            if call.cancel_requested:
                keep()
                recorder.fail(call, "cancelled from agentnb (the view's Stop)", status)
                return
            if last in part:
                read(part)
                if reader.done:
                    end()
                yield part
                continue
            yield part
            read(part)  # after the app has it: no added latency
        end()
    except httpx.HTTPError as exc:
        keep()
        recorder.fail(call, f"the upstream stream broke off: {exc!r}", status)
        raise
    finally:
        await answer.aclose()
        if not call.done:  # the app went away
            keep()
            recorder.fail(call, "the app closed the stream early", status)


class _Tape:
    """A stream as it passes: framed into events (the one framer), the credentials they
    carry masked across events (:class:`StreamMask`), each event's masked bytes kept in
    order; what comes after a stop (an event that could not be read) is kept as it came.
    :meth:`response` is the whole stream as recorded (every byte when nothing was masked)."""

    def __init__(self, secrets: Secrets, last: bytes) -> None:
        self.secrets, self.last = secrets, last
        self.framer, self.mask = SSEFramer(), StreamMask(secrets)
        self.kept: list[bytes] = []
        self.stopped = False
        self._pending: list[SSEEvent] = []  # released, not yet read: kept if reading stops

    def feed(self, part: bytes) -> list[SSEEvent]:
        if self.stopped:
            self.kept.append(part)
            return []
        out = []
        for event in self.framer.feed(part):
            released = self.mask.feed(event)
            if self.last in event.raw:  # the format's last event: nothing more can come
                released += self.mask.close()
            out += released
        self.kept += [e.raw for e in out]
        return out

    def stop(self) -> None:
        """Reading stopped: what is held and what is not framed is kept as it is."""
        if not self.stopped:
            self.stopped = True
            self.kept += [e.raw for e in self.mask.close()] + [self.framer.rest]

    def close(self) -> list[SSEEvent]:
        """The stream ended: the last event and everything still held."""
        if self.stopped:
            return []
        out = [e for event in self.framer.close() for e in self.mask.feed(event)]
        out += self.mask.close()
        self.kept += [e.raw for e in out]
        return out

    def response(self) -> str:
        self.stop()
        return self.secrets.mask(b"".join(self.kept).decode("utf-8", "replace"))
