"""Models the runtime can call: test doubles now; the OpenAI-compatible client and the local
SmolLM2 server plug in here (``openai.py``, ``local.py``, ``replay.py``)."""

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
from .openai import OpenAIModel
from .profiles import PROFILES, Profile
from .replay import Cassette
from .retry import RetryPolicy
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
