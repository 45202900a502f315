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
from .scripted import ScriptedModel

__all__ = [
    "Delta",
    "FunctionModel",
    "Model",
    "ModelLike",
    "ModelRequest",
    "ModelResponse",
    "ReplyAssembler",
    "RequestDiff",
    "ScriptedModel",
    "Usage",
]
