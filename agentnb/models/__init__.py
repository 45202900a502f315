"""Models the runtime can call.

Test doubles (``ScriptedModel``, ``FunctionModel``); ``OpenAIModel`` for any OpenAI-compatible
endpoint (``openai/``: compatibility ``profiles.py``, streamed chunks in ``sse.py``, retries in
``retry.py``, actions written as text in ``text_actions.py``); the one SSE framer
(``sse.py``: the client and the recording proxy both frame streams with it) and the masking
of credentials a stream carries across its events (``masking.py``); recorded replies, the one
format a call is answered from a recording in (``recorded.py``: ``Replies`` and its keys), and
cassettes of real exchanges in it (``replay.py``); and ``an.models.local``, the offline
SmolLM2 server.
"""

import importlib
from typing import TYPE_CHECKING

from .base import (
    Delta,
    Model,
    ModelLike,
    ModelRequest,
    ModelResponse,
    ReplyAssembler,
    RequestDiff,
    Usage,
)
from .function import FunctionModel
from .recorded import Replies, by_position, by_repeat, by_request, reply_dict, reply_of
from .scripted import ScriptedModel

if TYPE_CHECKING:  # loaded on first use, by __getattr__ below
    from .openai.client import OpenAIModel
    from .openai.profiles import PROFILES, Profile
    from .openai.retry import RetryPolicy
    from .replay import Cassette

#: Names whose modules load on first use: the HTTP stack (httpx, tenacity) costs more at
#: start-up than the rest of agentnb, and a notebook with a test double never needs it.
_ON_FIRST_USE = {
    "OpenAIModel": ".openai.client",
    "PROFILES": ".openai.profiles",
    "Profile": ".openai.profiles",
    "RetryPolicy": ".openai.retry",
    "Cassette": ".replay",
}

__all__ = [
    "PROFILES",
    "Cassette",
    "Delta",
    "FunctionModel",
    "Model",
    "ModelLike",
    "ModelRequest",
    "ModelResponse",
    "OpenAIModel",
    "Profile",
    "Replies",
    "ReplyAssembler",
    "RequestDiff",
    "RetryPolicy",
    "ScriptedModel",
    "Usage",
    "by_position",
    "by_repeat",
    "by_request",
    "reply_dict",
    "reply_of",
]


def __getattr__(name: str) -> object:
    # ``an.models.local`` loads on first use (``python -m
    # agentnb.models.local`` must not find the module already imported).
    if name == "local":
        return importlib.import_module(f"{__name__}.{name}")
    module = _ON_FIRST_USE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value  # found directly from now on
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__, "local"})
