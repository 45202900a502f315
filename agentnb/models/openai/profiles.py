"""Compatibility profiles: what each OpenAI-compatible server needs beyond the protocol.

Every server here speaks Chat Completions, each with quirks. A :class:`Profile` names them,
and :meth:`Profile.prepare` reshapes a request body before it is sent, returning what it
changed in words (the changes show up in ``ModelResponse.repairs``). Pick one by name
(``OpenAIModel(profile="llama-cpp-python")``), or leave ``profile="auto"`` to detect it
from the base URL, and for servers on loopback from their ``/models`` listing.

The quirks of ``llama-cpp-python`` (measured on its 0.3 server with SmolLM2):

* an assistant message with tool calls and ``content: null`` (or no ``content``) gets
  HTTP 500: ``""`` is sent instead;
* ``tool_choice: "required"`` gets HTTP 500: ``"auto"`` is sent instead;
* a request with tools but no ``tool_choice`` is treated as ``"none"`` (the tools are left
  out of the prompt): ``"auto"`` is sent explicitly;
* ``chatml-function-calling`` lists the tools only inside a system message: an empty one is
  added when a request with tools has none;
* that handler ignores ``max_tokens`` while it writes tool arguments (a rambling model fills
  the context: bound calls with ``total_timeout``);
* automatic tool choice works only with ``chat_format: chatml-function-calling``, whose
  template drops the content of ``tool`` messages (the model never sees tool results);
* streaming with tools returns an empty body and drops the connection: such requests are
  sent unstreamed and their reply is split into deltas;
* streamed tool calls repeat the id and the whole name in every chunk (the assembler sets
  names and appends only arguments); streams never carry usage (it is estimated).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import urlsplit

from ...errors import ConfigurationError

__all__ = ["PROFILES", "Profile", "detect_profile", "get_profile"]


@dataclass(frozen=True, slots=True)
class Profile:
    """How one kind of server differs from the OpenAI API. See the module docstring."""

    name: str
    #: Environment variable the API key is read from when none is given.
    key_env: str | None = "OPENAI_API_KEY"
    #: Whether a request without an API key is a configuration error.
    needs_key: bool = True
    #: ``"authorization"`` (``Bearer <key>``) or the name of a header holding the bare key.
    auth_header: str = "authorization"
    #: Send ``""`` instead of a null or missing ``content`` on assistant messages.
    empty_content_as_string: bool = False
    #: Insert an empty system message when tools are offered without one (llama-cpp-python's
    #: ``chatml-function-calling`` lists the tools only inside the system message).
    system_for_tools: bool = False
    #: ``tool_choice`` sent when tools are offered and none is given (OpenAI's default is
    #: ``"auto"``; llama-cpp-python treats a missing one as ``"none"``).
    tool_choice_default: str | None = None
    #: ``tool_choice`` values the server rejects, and what to send instead.
    tool_choice_fallback: dict[str, str] = field(default_factory=dict)
    #: Whether a streamed request may carry tools (else it is sent unstreamed).
    streams_with_tools: bool = True
    #: Ask for usage in the last chunk (``stream_options.include_usage``).
    stream_usage: bool = True
    #: Fields of outgoing assistant messages the server rejects or should not see.
    strip_message_fields: tuple[str, ...] = ("reasoning_content", "provider_data")
    #: Turn tool calls written as text into real calls (see ``text_actions.py``).
    text_actions: bool = False
    #: One line for the docs and the repr.
    note: str = ""

    def with_options(self, **changes: Any) -> Profile:
        """A copy with some fields changed, e.g. ``text_actions=True``."""
        return replace(self, **changes)

    def message(self, wire: dict[str, Any]) -> dict[str, Any]:
        """One outgoing message as this server takes it: ``wire`` itself when nothing changes
        (it is not copied, nor changed), else a changed copy."""
        strip = [key for key in self.strip_message_fields if key in wire]
        empty = (
            self.empty_content_as_string
            and wire.get("role") == "assistant"
            and wire.get("content") is None
        )
        if not strip and not empty:
            return wire
        out = {k: v for k, v in wire.items() if k not in strip}
        if empty:
            out["content"] = ""
        return out

    def prepare(self, body: dict[str, Any], *, stream: bool) -> tuple[dict[str, Any], list[str]]:
        """Reshape a request body for this server (its messages with :meth:`message`, the rest
        with :meth:`prepare_fields`); returns it and what changed."""
        messages = body.get("messages") or []
        prepared = [self.message(m) for m in messages]
        pairs = zip(messages, prepared, strict=True)
        emptied = sum(p is not m and m.get("content") is None for m, p in pairs)
        if messages:
            body["messages"] = prepared
        body, notes = self.prepare_fields(body, stream=stream)
        if emptied:
            notes.insert(0, f"{emptied} assistant message(s) sent with content '' instead of null")
        return body, notes

    def prepare_fields(
        self, body: dict[str, Any], *, stream: bool
    ) -> tuple[dict[str, Any], list[str]]:
        """Reshape a request body's fields (in place; its messages are already prepared, and
        are not changed, but an empty system message may be put first); returns it and what
        changed."""
        notes: list[str] = []
        if not body.get("tools"):
            # Without tools these fields are errors on OpenAI and meaningless elsewhere.
            body.pop("tools", None)
            for key in ("tool_choice", "parallel_tool_calls"):
                if body.pop(key, None) is not None:
                    notes.append(f"{key} dropped: the request has no tools")
        messages = body.get("messages") or []
        if (
            self.system_for_tools
            and body.get("tools")
            and messages[:1] != []
            and (messages[0].get("role") != "system")
        ):
            body["messages"] = [{"role": "system", "content": ""}, *messages]  # a new list
            notes.append("an empty system message was added so the tools are listed")
        if body.get("tools") and "tool_choice" not in body and self.tool_choice_default:
            body["tool_choice"] = self.tool_choice_default
            notes.append(f"tool_choice {self.tool_choice_default!r} sent explicitly")
        choice = body.get("tool_choice")
        if isinstance(choice, str) and choice in self.tool_choice_fallback:
            body["tool_choice"] = self.tool_choice_fallback[choice]
            notes.append(
                f"tool_choice {choice!r} is not supported by {self.name}; "
                f"sent {body['tool_choice']!r}"
            )
        if stream and body.get("tools") and not self.streams_with_tools:
            stream = False
            notes.append(f"{self.name} cannot stream with tools; the request was sent unstreamed")
        if stream:
            body["stream"] = True
            if self.stream_usage:
                body["stream_options"] = {"include_usage": True}
        else:
            body.pop("stream", None)
            body.pop("stream_options", None)
        return body, notes


PROFILES: dict[str, Profile] = {
    p.name: p
    for p in [
        Profile("openai", note="api.openai.com: the reference"),
        Profile(
            "generic",
            key_env=None,
            needs_key=False,
            stream_usage=False,  # stream_options is newer than many servers
            note="any OpenAI-compatible server, no assumptions",
        ),
        Profile(
            "azure",
            key_env="AZURE_OPENAI_API_KEY",
            auth_header="api-key",
            note="Azure OpenAI: key in the api-key header; give query={'api-version': ...}",
        ),
        Profile("deepseek", key_env="DEEPSEEK_API_KEY", note="reasoning_content never sent back"),
        Profile("qwen", key_env="DASHSCOPE_API_KEY", note="Alibaba DashScope compatible mode"),
        Profile("vllm", key_env="VLLM_API_KEY", needs_key=False, note="vLLM's OpenAI server"),
        Profile(
            "ollama",
            key_env=None,
            needs_key=False,
            stream_usage=False,
            note="Ollama's /v1 endpoint",
        ),
        Profile(
            "llama-cpp-python",
            key_env=None,
            needs_key=False,
            empty_content_as_string=True,
            tool_choice_default="auto",
            system_for_tools=True,
            tool_choice_fallback={"required": "auto"},
            streams_with_tools=False,
            stream_usage=False,
            note="llama-cpp-python's server: see the quirks in agentnb.models.openai.profiles",
        ),
        Profile(
            "anthropic",
            key_env="ANTHROPIC_API_KEY",
            auth_header="x-api-key",
            note="api.anthropic.com (AnthropicModel): the key in x-api-key, anthropic-version sent",
        ),
        Profile(
            "anthropic-compatible",
            key_env=None,
            needs_key=False,
            auth_header="x-api-key",
            note="a server speaking Anthropic Messages (AnthropicModel): the stand-in's, "
            "llama.cpp's and Ollama's /v1/messages; a key, when given, in x-api-key",
        ),
    ]
}

_HOSTS = {
    "api.openai.com": "openai",
    "api.deepseek.com": "deepseek",
    "dashscope.aliyuncs.com": "qwen",
    "dashscope-intl.aliyuncs.com": "qwen",
}


def get_profile(profile: str | Profile) -> Profile:
    """A profile by name (or the profile itself); a clear error for an unknown name."""
    if isinstance(profile, Profile):
        return profile
    try:
        return PROFILES[profile]
    except KeyError:
        raise ConfigurationError(
            f"unknown model profile {profile!r}; choose one of {sorted(PROFILES)} or 'auto', "
            "or build an agentnb.models.Profile"
        ) from None


def detect_profile(base_url: str, listing: dict[str, Any] | None = None) -> Profile:
    """Guess the profile from the base URL, or from a ``GET /models`` answer (``listing``)."""
    parts = urlsplit(base_url)
    host = (parts.hostname or "").lower()
    if host in _HOSTS:
        return PROFILES[_HOSTS[host]]
    if host.endswith(".openai.azure.com"):
        return PROFILES["azure"]
    if parts.port == 11434:
        return PROFILES["ollama"]
    data = (listing or {}).get("data") if isinstance(listing, dict) else None
    models = data if isinstance(data, list) else []  # a malformed listing: no hint
    owners = {str(m.get("owned_by")) for m in models if isinstance(m, dict)}
    if "me" in owners:  # llama-cpp-python lists its models as owned by "me"
        return PROFILES["llama-cpp-python"]
    if "vllm" in owners:
        return PROFILES["vllm"]
    if "library" in owners or "ollama" in owners:
        return PROFILES["ollama"]
    return PROFILES["generic"]


def is_loopback(base_url: str) -> bool:
    host = (urlsplit(base_url).hostname or "").lower()
    return host in ("localhost", "::1") or host.startswith("127.")
