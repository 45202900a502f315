"""Models the runtime can call.

Test doubles (``ScriptedModel``, ``FunctionModel``); ``OpenAIModel`` for any OpenAI-compatible
endpoint (``openai/``: compatibility ``profiles.py``, streamed chunks in ``sse.py``, retries in
``retry.py``, actions written as text in ``text_actions.py``); ``ResponsesModel`` and
``AnthropicModel``, the same client on the providers' own APIs (``native.py``); the one SSE framer
(``sse.py``: the client and the recording proxy both frame streams with it) and the masking
of credentials a stream carries across its events (``masking.py``); recorded replies, the one
format a call is answered from a recording in (``recorded.py``: ``Replies`` and its keys), and
cassettes of real exchanges in it (``replay.py``); the three wire formats, each read and
written in one codec (``wire/``: Chat Completions, the Responses API, Anthropic Messages; the
model clients, the recording proxy and the stand-in's server all speak through them); and
``an.models.local``, the offline SmolLM2 server.

Public for the periphery too (the recording proxy, the service's worker): the one secrets
rule every client applies (:class:`Secrets`, :func:`is_secret_name`, :func:`request_secrets`:
each credential registered once, masked everywhere), how a reply of the forms test doubles
allow becomes a :class:`ModelResponse` (:func:`coerce_response`), how a Chat Completions reply
and a streamed chunk are read (:func:`parse_completion`, :func:`chunk_deltas`), how the bytes
of an event stream are framed (:class:`SSEFramer`, :class:`SSEEvent`) and the credentials its
events carry masked across them (:class:`StreamMask`, :func:`mask_stream`), a cassette
line's key (:func:`request_key`), and the wire codecs (:data:`WIRES`, :func:`wire_for`,
:class:`Wire`, :class:`WireRequest`, :class:`WireReply`, :func:`named_tools`). Structured
output (``output.py``, ``strict.py``): the answer format a request asks for
(:class:`OutputSpec`, ``request.output``: each client writes it its API's way), the type its
answer is validated into (:class:`OutputType`), and the rewrite of a schema into strict
mode's subset (:func:`strict_schema`).

Public for the evaluations (``agentnb.evals``): how a whole reply is streamed as deltas
(:func:`stream_response`, what a cache or a replay answers a streaming caller with), and the
one home of each diff (``differ.py``): the paths where two JSON values differ
(:func:`json_changes`, :func:`changed_paths`), two message lists aligned
(:func:`messages_diff`) and two texts line by line (:func:`line_diff`).
"""

import importlib
from typing import TYPE_CHECKING

from .._secrets import Secrets, is_secret_name, request_secrets
from .base import (
    Delta,
    Model,
    ModelLike,
    ModelRequest,
    ModelResponse,
    ReplyAssembler,
    RequestDiff,
    Usage,
    coerce_response,
    stream_response,
)
from .differ import changed_paths, json_changes, line_diff, messages_diff
from .function import FunctionModel
from .masking import StreamMask, mask_stream
from .output import OutputCheck, OutputSpec, OutputType
from .recorded import Replies, by_position, by_repeat, by_request, reply_dict, reply_of
from .scripted import ScriptedModel
from .sse import SSEEvent, SSEFramer
from .strict import strict_schema

if TYPE_CHECKING:  # loaded on first use, by __getattr__ below
    from .native import AnthropicModel, ResponsesModel
    from .openai.client import OpenAIModel
    from .openai.profiles import PROFILES, Profile
    from .openai.retry import RetryPolicy
    from .openai.sse import chunk_deltas
    from .openai.wire import parse_completion
    from .replay import Cassette, request_key
    from .wire import WIRES, Wire, named_tools, wire_for
    from .wire import Reply as WireReply
    from .wire import Request as WireRequest

#: Names whose modules load on first use: the HTTP stack (httpx, tenacity) costs more at
#: start-up than the rest of agentnb, and a notebook with a test double never needs it.
_ON_FIRST_USE = {
    "OpenAIModel": ".openai.client",
    "ResponsesModel": ".native",
    "AnthropicModel": ".native",
    "PROFILES": ".openai.profiles",
    "Profile": ".openai.profiles",
    "RetryPolicy": ".openai.retry",
    "Cassette": ".replay",
    "request_key": ".replay",
    "chunk_deltas": ".openai",
    "parse_completion": ".openai",
    "WIRES": ".wire",
    "Wire": ".wire",
    "WireReply": ".wire",
    "WireRequest": ".wire",
    "named_tools": ".wire",
    "wire_for": ".wire",
}
#: Names kept under another name in their module.
_RENAMED = {"WireReply": "Reply", "WireRequest": "Request"}

__all__ = [
    "PROFILES",
    "WIRES",
    "AnthropicModel",
    "Cassette",
    "Delta",
    "FunctionModel",
    "Model",
    "ModelLike",
    "ModelRequest",
    "ModelResponse",
    "OpenAIModel",
    "OutputCheck",
    "OutputSpec",
    "OutputType",
    "Profile",
    "Replies",
    "ReplyAssembler",
    "RequestDiff",
    "ResponsesModel",
    "RetryPolicy",
    "SSEEvent",
    "SSEFramer",
    "ScriptedModel",
    "Secrets",
    "StreamMask",
    "Usage",
    "Wire",
    "WireReply",
    "WireRequest",
    "by_position",
    "by_repeat",
    "by_request",
    "changed_paths",
    "chunk_deltas",
    "coerce_response",
    "is_secret_name",
    "json_changes",
    "line_diff",
    "mask_stream",
    "messages_diff",
    "named_tools",
    "parse_completion",
    "reply_dict",
    "reply_of",
    "request_key",
    "request_secrets",
    "stream_response",
    "strict_schema",
    "wire_for",
]


def __getattr__(name: str) -> object:
    # ``an.models.local`` loads on first use (``python -m
    # agentnb.models.local`` must not find the module already imported).
    if name == "local":
        return importlib.import_module(f"{__name__}.{name}")
    module = _ON_FIRST_USE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), _RENAMED.get(name, name))
    globals()[name] = value  # found directly from now on
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__, "local"})
