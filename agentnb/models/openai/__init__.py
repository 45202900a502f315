"""OpenAI-compatible Chat Completions: the httpx client, SSE streaming, retries, server
profiles, text actions (tool calls written as text) and the wire parsing they share."""

from .client import OpenAIModel

__all__ = ["OpenAIModel"]
