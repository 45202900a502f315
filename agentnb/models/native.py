"""The providers' own APIs as models: the Responses API and Anthropic Messages.

:class:`ResponsesModel` and :class:`AnthropicModel` are :class:`~agentnb.models.OpenAIModel`
with another wire format: the same retries, one deadline over every phase,
``max_response_bytes``, typed HTTP errors, the one secrets rule, cassettes and
``with_transport``; the request written and the reply read by the format's codec
(:mod:`agentnb.models.wire`, which the recording proxy and the stand-in's server read and
write with too). What these APIs add to Chat Completions is kept in the transcript:

* **reasoning**: the readable part in ``reasoning_content``, whatever the API; the opaque
  part (a thinking block's ``signature``, a reasoning item's ``id`` and
  ``encrypted_content``) in the message's ``provider_data``, sent back exactly as it came.
  Reasoning another API wrote cannot be sent back (it is bound to its signer): it is
  dropped, and the reply says so in ``repairs`` (a problem of the call, never silence);
* **server-side state** (``ResponsesModel(conversation="previous_response_id")``): a call
  sends only the items after the last reply the server stored, naming that reply; the reply's
  ``provider_data`` records the response it continued and how many messages were sent of
  the whole context the server held (which the agent's token budget counts), and a digest
  of the context the server now holds: a transcript edited (or forked with a change) before
  the stored reply no longer matches it, and the call sends the whole context instead (the
  reply says why in ``repairs``), never answered from the server's other context in silence;
* **structured output** (``request.output``): ``text.format`` on the Responses API; on
  Anthropic the answer tool (:mod:`agentnb.models.answer_tool`), read back as the final text;
* **prompt caching** (``AnthropicModel(cache=True)``): breakpoints on the instructions and
  the tools.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from typing import Any, Literal
from urllib.parse import urlsplit

from ..errors import ConfigurationError
from .answer_tool import add_answer_tool, answered
from .base import ModelRequest, ModelResponse, coerce_response
from .openai.client import OpenAIModel
from .openai.profiles import PROFILES, Profile
from .wire import WIRES, Reply
from .wire.anthropic import ANTHROPIC
from .wire.base import KEPT
from .wire.reader import WireReader

__all__ = ["AnthropicModel", "ResponsesModel"]

Conversation = Literal["stateless", "previous_response_id"]


class _Native(OpenAIModel):
    """What the two share: the codec writes the body and reads the reply."""

    probes = False
    #: The wire format's name in :data:`~agentnb.models.WIRES`.
    api = ""

    def _write(self, request: ModelRequest, stream: bool) -> tuple[dict[str, Any], list[str]]:
        params = {**self.params, **request.params}
        return WIRES[self.api].write_request(
            self.model, list(request.messages), request.tools, params, stream
        )

    def _body(self, request: ModelRequest, stream: bool) -> tuple[dict[str, Any], list[str]]:
        return self._write(request, stream)

    def _kept(self, reply: Reply) -> dict[str, Any]:
        data = reply.message.get(KEPT)
        return {KEPT: data} if data else {}

    def _parse(self, data: dict[str, Any]) -> ModelResponse:
        try:
            reply = WIRES[self.api].read_reply(data)
        except ValueError as exc:
            raise self._unreadable(str(exc)) from None
        message = coerce_response({**reply.message, **self._kept(reply)}).message
        return ModelResponse(message, reply.usage, reply.finish_reason, reply.model, data)

    def _unreadable(self, why: str) -> Exception:
        from ..errors import ModelResponseError

        return ModelResponseError(f"POST {self.shown_url}: the reply cannot be read: {why}")

    def _reader(self, what: str) -> WireReader:
        return WireReader(what, self.secrets, WIRES[self.api], self._kept)


class ResponsesModel(_Native):
    """The OpenAI Responses API (``POST /v1/responses``). ``ResponsesModel("gpt-5-mini")``
    reads ``OPENAI_API_KEY``; every option of :class:`~agentnb.models.OpenAIModel` applies.

    Args:
        conversation: ``"stateless"`` (every call sends the whole context, ``store: false``,
            reasoning kept as encrypted items and sent back) or ``"previous_response_id"``
            (the server stores each reply; a call sends only the new items and names the
            reply it continues).
    """

    api = "responses"
    path = "/responses"

    def __init__(
        self, model: str | None = None, *, conversation: Conversation = "stateless", **options: Any
    ) -> None:
        if conversation not in ("stateless", "previous_response_id"):
            raise ConfigurationError(
                f"conversation must be 'stateless' or 'previous_response_id', not {conversation!r}"
            )
        super().__init__(model, **options)
        self.conversation = conversation

    def _continues(self, request: ModelRequest) -> tuple[int, str | None, str | None]:
        """Where the new messages start, the stored response they continue, and why not
        (0, None, why: every message is sent). A stored reply continues only when the
        transcript up to it is still the context the server holds (its ``context`` digest,
        recorded when it came): a transcript edited or forked with a change before it would
        otherwise be answered from the server's other context, silently (invariant 10)."""
        if self.conversation == "stateless":
            return 0, None, None
        messages = request.messages
        for i in range(len(messages) - 1, -1, -1):
            data = messages[i].get(KEPT) if messages[i].get("role") == "assistant" else None
            if (
                isinstance(data, dict)
                and data.get("api") == "responses"
                and data.get("response_id")
            ):
                stored = str(data["response_id"])
                if data.get("context") == _context(messages[: i + 1]):
                    return i + 1, stored, None
                why = "was edited since" if data.get("context") else "is not known to match"
                return (
                    0,
                    None,
                    (
                        f"previous_response_id not used: the transcript up to message {i} (the "
                        f"reply stored as {stored!r}) {why} the server stored it, so the server "
                        f"holds another context; the whole context was sent ({len(messages)} "
                        "messages)"
                    ),
                )
        return 0, None, None

    def _write(self, request: ModelRequest, stream: bool) -> tuple[dict[str, Any], list[str]]:
        body, notes = super()._write(request, stream)
        text = body.get("text")
        if request.output is not None and not (isinstance(text, dict) and "format" in text):
            body["text"] = {**(text if isinstance(text, dict) else {}),
                            "format": request.output.responses()}  # fmt: skip
        return body, notes

    def _body(self, request: ModelRequest, stream: bool) -> tuple[dict[str, Any], list[str]]:
        start, previous, why = self._continues(request)
        if previous is None:
            body, notes = self._write(request, stream)
            if self.conversation == "stateless":
                body.setdefault("store", False)
                body.setdefault("include", ["reasoning.encrypted_content"])
            return body, [*notes, why] if why else notes
        messages = request.messages
        system = (
            [messages[0]] if messages and messages[0].get("role") in ("system", "developer") else []
        )
        sent = ModelRequest(
            [*system, *messages[start:]], request.tools, request.params, output=request.output
        )
        body, notes = self._write(sent, stream)
        body["previous_response_id"] = previous
        return body, notes

    def _kept(self, reply: Reply) -> dict[str, Any]:
        data = dict(reply.message.get(KEPT) or {"api": "responses"})
        if reply.id:
            data["response_id"] = reply.id
        return {KEPT: data}

    def _held(self, response: ModelResponse, request: ModelRequest) -> ModelResponse:
        """The reply with the digest of the context the server now holds (the transcript up
        to this reply) and, when it continued a stored one, what this call sent and what the
        server held beside it."""
        data = response.message.wire().get(KEPT)
        if self.conversation == "stateless" or not isinstance(data, dict):
            return response
        start, previous, _ = self._continues(request)
        held: dict[str, Any] = {"context": _context([*request.messages, response.message.wire()])}
        if previous is not None:
            system = int(
                bool(request.messages)
                and request.messages[0].get("role") in ("system", "developer")
            )
            held.update(
                previous_response_id=previous,
                sent=len(request.messages) - start + system,
                held=len(request.messages),
            )
        message = response.message.model_copy(update={KEPT: {**data, **held}})
        return replace(response, message=message)

    async def complete(self, request: ModelRequest) -> ModelResponse:
        return self._held(await super().complete(request), request)

    def finish_stream(self, response: ModelResponse, request: ModelRequest) -> ModelResponse:
        return self._held(super().finish_stream(response, request), request)


class AnthropicModel(_Native):
    """Anthropic Messages (``POST /v1/messages``). ``AnthropicModel("claude-sonnet-4-5")``
    reads ``ANTHROPIC_API_KEY`` (sent in ``x-api-key``, with ``anthropic-version``); every
    option of :class:`~agentnb.models.OpenAIModel` applies.

    Args:
        thinking: a budget of thinking tokens (extended thinking on), or None.
        cache: prompt-caching breakpoints on the instructions and the tools.
        version: the ``anthropic-version`` header.
    """

    api = "anthropic"
    provider = "anthropic"
    path = "/messages"
    model_env, url_env, default_url = (
        "ANTHROPIC_MODEL",
        "ANTHROPIC_BASE_URL",
        "https://api.anthropic.com/v1",
    )

    def __init__(
        self,
        model: str | None = None,
        *,
        thinking: int | None = None,
        cache: bool = False,
        version: str = "2023-06-01",
        **options: Any,
    ) -> None:
        super().__init__(model, **options)
        self.thinking = thinking
        self.cache = cache
        self.headers.setdefault("anthropic-version", version)

    def _detected(self, base_url: str) -> Profile:
        host = (urlsplit(base_url).hostname or "").lower()
        return PROFILES["anthropic" if host == "api.anthropic.com" else "anthropic-compatible"]

    def _write(self, request: ModelRequest, stream: bool) -> tuple[dict[str, Any], list[str]]:
        params = {**self.params, **request.params}
        if self.thinking:
            params.setdefault("thinking", {"type": "enabled", "budget_tokens": self.thinking})
        body, notes = ANTHROPIC.write_request(
            self.model, list(request.messages), request.tools, params, stream, self.cache
        )
        if request.output is not None:
            notes += add_answer_tool(body, request.output)
        return body, notes

    async def complete(self, request: ModelRequest) -> ModelResponse:
        return answered(await super().complete(request), request)

    def finish_stream(self, response: ModelResponse, request: ModelRequest) -> ModelResponse:
        return answered(super().finish_stream(response, request), request)


def _context(messages: Any) -> str:
    """A digest of the conversation a stored response holds: its messages (the instructions
    aside: each request sends its own) without what they keep for the provider."""
    start = int(bool(messages) and messages[0].get("role") in ("system", "developer"))
    shown = [{k: v for k, v in m.items() if k != KEPT} for m in messages[start:]]
    text = json.dumps(shown, ensure_ascii=False, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:24]
