"""What the proxy saw, as a cassette: the app's conversations replay offline.

Each answered call becomes a line of the format of :mod:`agentnb.models.replay`, keyed by
the request as the app sent it (method, path, non-secret query and JSON body; never a
header, so no key), with the upstream's status and body (a stream's events, as they
passed; credentials masked). Two ways to replay:

* **the app itself**, unchanged but for its HTTP client (``httpx`` with
  ``agentnb.models.replay.ReplayTransport(Cassette(path))``): the same requests get the same
  bytes, in all three wire formats;
* **agentnb**: ``Cassette(path).replay()`` is an :class:`~agentnb.models.OpenAIModel` that
  answers a Chat Completions session's requests (``session.requests[k].request``) whether
  it asks whole (``complete``) or streamed (``stream``): each chat call is also written in
  the other mode - a streamed call's reply as a whole completion, a whole call's as a
  one-chunk stream - keyed by the body an ``OpenAIModel`` sends in that mode (these lines
  carry ``"twin": true``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..models import Cassette, request_key
from .calls import ProxiedCall

__all__ = ["save_cassette"]


def _entry(call: ProxiedCall, body: dict[str, Any], stream: bool, response: str) -> dict[str, Any]:
    canonical = {
        "method": "POST",
        "path": call.path,
        "query": [list(p) for p in call.query],
        "body": body,
    }
    return {
        "key": request_key(canonical),
        "request": canonical,
        "response": {
            "status": call.status,
            "headers": {"content-type": "text/event-stream" if stream else "application/json"},
            "body": response,
        },
        "client": {
            "model": str(body.get("model") or "proxied"),
            "profile": "generic",
            "stream": stream,
            "text_actions": False,
            "params": {},
            "path": call.path,
        },
    }


def _twin(call: ProxiedCall) -> dict[str, Any] | None:
    """The call in the other streaming mode, as an ``OpenAIModel`` would ask and be answered."""
    if call.api != "chat" or call.reply is None or not call.ok:
        return None
    reply = call.reply
    body = {k: v for k, v in call.body.items() if k not in ("stream", "stream_options")}
    finish = reply.finish_reason or "stop"
    completion: dict[str, Any] = {
        "id": reply.id or "chatcmpl-proxied",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": reply.model or body.get("model") or "proxied",
        "choices": [{"index": 0, "message": reply.message, "finish_reason": finish}],
    }
    if reply.usage is not None:
        completion["usage"] = {
            "prompt_tokens": reply.usage.prompt_tokens,
            "completion_tokens": reply.usage.completion_tokens,
            "total_tokens": reply.usage.total_tokens,
        }
    text = call.secrets.mask(json.dumps(completion, ensure_ascii=False))
    if call.stream:
        twin = _entry(call, body, False, text)
    else:
        chunk = {
            **completion,
            "object": "chat.completion.chunk",
            "choices": [
                {
                    "index": 0,
                    "delta": reply.message,
                    "finish_reason": finish,
                }
            ],
        }
        events = f"data: {json.dumps(chunk, ensure_ascii=False)}\n\ndata: [DONE]\n\n"
        twin = _entry(call, {**body, "stream": True}, True, events)
    twin["twin"] = True
    return twin


def save_cassette(calls: Sequence[ProxiedCall], path: str | Path) -> Path:
    """Append every answered call of ``calls`` to the cassette at ``path``; returns the path."""
    cassette = Cassette(path)
    for call in calls:
        if call.status is None:  # never answered (unreachable, timed out): nothing to replay
            continue
        cassette.append(_entry(call, call.body, call.stream, call.response))
        twin = _twin(call)
        if twin is not None:
            cassette.append(twin)
    return cassette.path
