"""OpenAI-compatible Chat Completions: the httpx client, SSE streaming, retries, server
profiles, text actions (tool calls written as text) and the wire parsing they share."""

from .client import OpenAIModel
from .sse import chunk_deltas
from .wire import parse_completion

#: ``parse_completion`` and ``chunk_deltas`` are public: how a Chat Completions reply and a
#: streamed chunk are read, shared with the recording proxy (``agentnb.observe``).
__all__ = ["OpenAIModel", "chunk_deltas", "parse_completion"]
