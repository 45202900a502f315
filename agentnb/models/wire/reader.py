"""A streamed reply of any wire format, read into deltas by the format's own stream reader.

:class:`WireReader` is the model clients' side of :meth:`Wire.stream
<agentnb.models.wire.Wire.stream>`: the bytes are framed by the one SSE framer and masked by
the one stream mask (as :class:`~agentnb.models.openai.sse.SSEReader` does for Chat
Completions, whose loop it shares), each event is read by the format's reader, and once the
format's last event came (``response.completed``, ``message_stop``) one more delta carries
what only the whole reply knows: its finish reason, its usage, and what the provider needs
back exactly (``provider_data``: signed thinking blocks, encrypted reasoning items). An
error event, or a stream that ends before its last event, is a
:class:`~agentnb.errors.ModelStreamError`: a partial reply is not a reply.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

from ..._secrets import Secrets
from ...errors import ModelStreamError
from ..deltas import Delta
from ..openai.retry import redact
from ..openai.sse import SSEReader
from ..sse import SSEEvent
from .base import Reply

__all__ = ["WireReader"]


class WireReader(SSEReader):
    """Reads one streamed reply of ``wire`` (a :class:`~agentnb.models.wire.Wire`); ``kept``
    gives, from the whole reply, the message fields its last delta carries."""

    def __init__(
        self,
        what: str,
        secrets: Secrets,
        wire: Any,
        kept: Callable[[Reply], dict[str, Any]],
    ) -> None:
        super().__init__(what, secrets)
        self._format = wire.name
        self._stream = wire.stream()
        self._kept = kept

    def _released(self, events: list[SSEEvent]) -> Iterator[Delta | None]:
        for event in events:
            payload = redact(event.data, self.secrets)
            try:
                deltas = self._stream.feed(event.name, payload)
            except json.JSONDecodeError as exc:
                raise ModelStreamError(
                    f"{self.what}: event {self.chunks + 1} is not JSON ({exc.msg}): "
                    f"{payload[:200]!r}"
                ) from None
            except (ValueError, TypeError, AttributeError) as exc:
                message = redact(str(exc), self.secrets)
                raise ModelStreamError(
                    f"{self.what}: the server sent an error mid-stream (event "
                    f"{self.chunks + 1}): {message}"
                ) from None
            self.chunks += 1
            yield from deltas
            if self._stream.done:
                self.finished = self.done = True
                try:
                    reply = self._stream.reply()
                except ValueError as exc:
                    message = redact(str(exc), self.secrets)
                    raise ModelStreamError(f"{self.what}: {message}") from None
                fields = self._kept(reply)
                yield Delta(
                    finish_reason=reply.finish_reason or "stop",
                    usage=reply.usage,
                    kept=fields or None,
                )
                yield None
                return

    def check_complete(self) -> None:
        if self.finished:
            return
        raise ModelStreamError(
            f"{self.what}: the {self._format} stream broke off after {self.chunks} events, "
            "before its last one; the partial reply was discarded"
        )
