"""What the proxy saw, as a cassette: the app's conversation replays offline.

Each proxied chat call becomes one line of the format of :mod:`agentnb.models.replay`,
keyed by the request as the app sent it (method, path and JSON body; never a header, so no
key), with the upstream's status and body (the SSE bytes of a stream, as they passed). So
``an.models.Cassette(path).replay()`` - an ``OpenAIModel`` - answers the same requests with
the same replies, and so does the app itself pointed at a replaying transport.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..models.replay import Cassette, request_key
from .record import Call

__all__ = ["save_cassette"]


def save_cassette(calls: Sequence[Call], path: str | Path) -> Path:
    """Append every answered call of ``calls`` to the cassette at ``path``; returns the path."""
    cassette = Cassette(path)
    for call in calls:
        if call.status is None:  # never answered (unreachable, timed out): nothing to replay
            continue
        query = [list(pair) for pair in call.query]  # as the replay computes it: JSON lists
        canonical = {"method": "POST", "path": call.path, "query": query, "body": call.body}
        kind = "text/event-stream" if call.stream else "application/json"
        cassette.append(
            {
                "key": request_key(canonical),
                "request": canonical,
                "response": {
                    "status": call.status,
                    "headers": {"content-type": kind},
                    "body": call.response,
                },
                "client": {
                    "model": str(call.body.get("model") or "proxied"),
                    "profile": "generic",
                    "stream": call.stream,
                    "text_actions": False,
                    "params": {},
                    "path": call.path,
                },
            }
        )
    return cassette.path
