"""Models the runtime can call.

Test doubles (``ScriptedModel``, ``FunctionModel``); ``OpenAIModel`` for any OpenAI-compatible
endpoint (``openai.py``: compatibility ``profiles.py``, SSE in ``sse.py``, retries in
``retry.py``, actions written as text in ``text_actions.py``); cassettes that record and
replay real exchanges (``replay.py``); and ``an.models.local``, the offline SmolLM2 server.
"""

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
from .openai.client import OpenAIModel
from .openai.profiles import PROFILES, Profile
from .openai.retry import RetryPolicy
from .replay import Cassette
from .scripted import ScriptedModel

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
    "ReplyAssembler",
    "RequestDiff",
    "RetryPolicy",
    "ScriptedModel",
    "Usage",
]


def __getattr__(name: str) -> object:
    # ``an.models.local`` loads on first use (``python -m
    # agentnb.models.local`` must not find the module already imported).
    if name == "local":
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
