"""The stand-in's reasoning signatures: what a real API's opaque reasoning is, made checkable.

Anthropic signs each thinking block (``signature``) and rejects a tool-use turn whose thinking
came back altered or unsigned; the Responses API gives each reasoning item an ``id`` (found
again when the response was stored) and, when asked, its ``encrypted_content`` (for
``store: false``), and rejects an item it cannot find or decrypt. :class:`Signer` does the
same for the stand-in's server with a key of its own (a keyed MAC: another server's, or an
edited, signature fails), so a client that does not send reasoning back exactly fails
against the stand-in as it would against the real API. ``signed=False`` serves the same
reasoning unsigned (an empty signature, no encrypted content) and checks nothing: the shape
of a server whose reasoning a client can only re-send as text. A signed reply's tool calls get
ids of their own (``toolu_…``, ``call_…``, as the real APIs issue them), so the server knows
which turns must bring their reasoning back.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
from typing import Any

from ..models import ModelResponse, WireRequest

__all__ = ["Signer"]

_KEPT = "provider_data"


class Signer:
    """Signs the reasoning the stand-in writes and checks what comes back (module docstring)."""

    def __init__(self, signed: bool = True) -> None:
        self.signed = signed
        self._key = os.urandom(32)
        self._stored: set[str] = set()
        #: Tool calls written with signed reasoning: their turn must bring it back.
        self._thought: dict[str, str] = {}

    def _mac(self, *parts: str) -> str:
        data = "\x1f".join(parts).encode()
        return base64.urlsafe_b64encode(hmac.digest(self._key, data, hashlib.sha256)).decode()

    def sign(self, response: ModelResponse, request: WireRequest) -> ModelResponse:
        """``response`` with its reasoning as ``request``'s API keeps it (signed or not)."""
        message = response.message
        text = message.reasoning_content
        if not text or request.api not in ("anthropic", "responses"):
            return response
        if request.api == "anthropic":
            signature = self._mac("thinking", text) if self.signed else ""
            blocks = [{"type": "thinking", "thinking": text, "signature": signature}]
        else:
            item_id = "rs_" + os.urandom(12).hex()
            item: dict[str, Any] = {
                "type": "reasoning",
                "id": item_id,
                "summary": [{"type": "summary_text", "text": text}],
            }
            if self.signed:
                sealed = base64.b64encode(json.dumps([item_id, text]).encode()).decode()
                item["encrypted_content"] = f"{sealed}.{self._mac('reasoning', item_id, text)}"
                if request.store:
                    self._stored.add(item_id)
            blocks = [item]
        update: dict[str, Any] = {_KEPT: {"api": request.api, "reasoning": blocks}}
        if self.signed and message.calls:  # ids of its own, as the real APIs issue them
            prefix = "toolu_" if request.api == "anthropic" else "call_"
            calls = [
                c.model_copy(update={"id": prefix + os.urandom(12).hex()}) for c in message.calls
            ]
            for call in calls:
                self._thought[call.id] = request.api
            update["tool_calls"] = tuple(calls)
        return ModelResponse(
            message.model_copy(update=update),
            response.usage,
            response.finish_reason,
            response.model,
            response.raw,
        )

    def check(self, request: WireRequest) -> None:
        """Raise ValueError (answered 400, as the real APIs do) for reasoning that did not
        come back exactly as this server wrote it."""
        if not self.signed:
            return
        for n, message in enumerate(request.messages):
            if message.get("role") != "assistant":
                continue
            data = message.get(_KEPT)
            ours = isinstance(data, dict) and data.get("api") == request.api
            blocks = data.get("reasoning") if ours and isinstance(data, dict) else None
            if not blocks:
                self._check_missing(n, message, request)
                continue
            for block in blocks:
                if request.api == "anthropic":
                    self._check_thinking(n, block)
                else:
                    self._check_item(block)

    def _check_missing(self, n: int, message: dict[str, Any], request: WireRequest) -> None:
        """A turn whose tool calls were written with reasoning came back without it."""
        for call in message.get("tool_calls") or ():
            if self._thought.get(str(call.get("id"))) != request.api:
                continue
            if request.api == "anthropic":
                raise ValueError(
                    f"messages.{n}.content.0.type: Expected `thinking` or `redacted_thinking`, "
                    "but found `tool_use`. When `thinking` is enabled, a final `assistant` "
                    "message must start with a thinking block"
                )
            raise ValueError(
                f"Item of type 'function_call' (call_id {call.get('id')!r}) was provided "
                "without its required 'reasoning' item"
            )

    def _check_thinking(self, n: int, block: dict[str, Any]) -> None:
        if block.get("type") != "thinking":
            return
        signature = block.get("signature") or ""
        expected = self._mac("thinking", str(block.get("thinking", "")))
        if not hmac.compare_digest(str(signature), expected):
            raise ValueError(
                f"messages.{n}.content: Invalid `signature` in `thinking` block "
                "(the thinking was altered, or not signed by this server)"
            )

    def _check_item(self, item: dict[str, Any]) -> None:
        item_id = str(item.get("id") or "")
        sealed = item.get("encrypted_content")
        if not sealed:
            if item_id not in self._stored:
                raise ValueError(
                    f"Item with id {item_id!r} not found. Items are not persisted when `store` "
                    "is set to false: send the reasoning item's encrypted_content back"
                )
            return
        try:
            body, mac = str(sealed).rsplit(".", 1)
            found_id, text = json.loads(base64.b64decode(body))
        except (ValueError, TypeError):
            raise ValueError(
                f"The encrypted content for item {item_id!r} could not be verified"
            ) from None
        if found_id != item_id or not hmac.compare_digest(
            mac, self._mac("reasoning", item_id, text)
        ):
            raise ValueError(f"The encrypted content for item {item_id!r} could not be verified")
