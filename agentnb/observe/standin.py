"""Any agentnb model behind an HTTP endpoint speaking the three APIs apps use: an upstream to
watch an app on without a real model.

    with an.observe.serve(an.travel.TravelModel(), delay=0.3) as upstream:
        proxy = an.observe.proxy(upstream=upstream.base_url)

``POST /v1/chat/completions`` (Chat Completions), ``POST /v1/responses`` (the Responses
API; ``previous_response_id`` continues a stored response, ``store: false`` stores none) and
``POST /v1/messages`` (Anthropic Messages), whole or streamed, tool calls and reasoning
included (:mod:`.wire` writes each format); ``GET /v1/models``. Usage is always reported:
the model's own, else estimated as agentnb estimates tokens; a Chat Completions stream
carries it when asked with ``stream_options.include_usage``, as OpenAI's does. The stand-in
travel model needs no network and no weights, so an app written with the openai,
openai-agents or anthropic SDK can be watched in any environment; ``delay`` (seconds per
call) and ``chunk_delay`` (per streamed event) make it think like a real one.

Never a bare 500: a request that is not the format's is a 400, and a model that raises
answers an error in the format's own shape (500, its ``type`` and message), so the app's
SDK raises its usual error.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import os
from collections import OrderedDict
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from ..models import (
    WIRES,
    ModelLike,
    ModelRequest,
    ModelResponse,
    OutputSpec,
    Usage,
    Wire,
    WireRequest,
    coerce_response,
)
from ..tokens import estimate_json_tokens
from .background import BackgroundServer
from .signing import Signer

__all__ = ["ModelServer", "serve"]

_TRANSPORT = frozenset(("stream_options", "store", "previous_response_id", "metadata"))
#: How many stored responses ``previous_response_id`` can continue (the oldest go first).
STORED = 1000


class ModelServer:
    """``model`` served on 127.0.0.1 (see :func:`serve`): ``base_url``, ``close()``."""

    def __init__(
        self,
        model: ModelLike,
        *,
        port: int = 0,
        delay: float = 0.0,
        chunk_delay: float = 0.0,
        signed: bool = True,
    ) -> None:
        self.model = model
        #: Signs the reasoning served on the Responses and Anthropic APIs and checks it back.
        self.signer = Signer(signed)
        self.delay = delay
        self.chunk_delay = chunk_delay
        self.calls = 0
        #: Errors the model raised, answered as errors of the request's format.
        self.errors: list[str] = []
        self._stored: OrderedDict[str, list[dict[str, Any]]] = OrderedDict()
        #: Prompt-cache prefixes seen (Anthropic ``cache_control``), by their JSON.
        self._cached: set[str] = set()
        routes = [
            Route(f"/v1{w.path}", self._endpoint(w), methods=["POST"]) for w in WIRES.values()
        ]
        routes.append(Route("/v1/models", self._models, methods=["GET"]))
        self._server = BackgroundServer(Starlette(routes=routes), port=port, name="agentnb-standin")

    @property
    def url(self) -> str:
        """The server's address: the base URL of SDKs that add ``/v1`` themselves."""
        return f"http://{self._server.host}:{self._server.port}"

    @property
    def base_url(self) -> str:
        """The OpenAI SDKs' base URL (``…/v1``)."""
        return f"{self.url}/v1"

    async def _models(self, request: Request) -> Response:
        listing = [{"id": self.model.name, "object": "model", "owned_by": "agentnb"}]
        return JSONResponse({"object": "list", "data": listing})

    def _endpoint(self, wire: Wire) -> Any:
        async def endpoint(request: Request) -> Response:
            return await self._answer(wire, request)

        return endpoint

    async def _answer(self, wire: Wire, http: Request) -> Response:
        try:
            body = json.loads(await http.body())
            if not isinstance(body, dict):
                raise ValueError("the body is not a JSON object")
            request = wire.read_request(body)
            self.signer.check(request)
            messages = self._conversation(request)
        except (ValueError, KeyError, RecursionError) as exc:
            return JSONResponse(wire.error(str(exc), "invalid_request_error"), status_code=400)
        params = {k: v for k, v in request.params.items() if k not in _TRANSPORT}
        tools, output = request.tools, None
        if wire.name == "anthropic":  # structured output there is a tool to call: its input
            output, tools = OutputSpec.from_anthropic(request.tools, params.get("tool_choice"))
            if output is not None:
                params.pop("tool_choice", None)
        if self.delay:
            await asyncio.sleep(self.delay)
        try:
            response = await self.model.complete(
                ModelRequest(messages, tools, params, output=output)
            )
            if not isinstance(response, ModelResponse):
                response = coerce_response(response, self.model.name)
            if output is not None:
                response = _as_answer_tool(response, output)
        except Exception as exc:  # the app gets an error it can read, never a bare 500
            text = f"{self.model.name} raised {type(exc).__name__}: {exc}"
            self.errors.append(text)
            return JSONResponse(wire.error(text, "server_error"), status_code=500)
        self.calls += 1
        response = self.signer.sign(response, request)
        usage = self._cache(body, response.usage or _estimate(messages, request.tools, response))
        if not request.stream:
            data = wire.render(response, request, usage)
            self._store(wire, request, data.get("id"), messages, response)
            return JSONResponse(data)
        events = list(wire.render_stream(response, request, usage))
        self._store(wire, request, _streamed_id(wire, events), messages, response)
        return StreamingResponse(self._paced(events), media_type="text/event-stream")

    def _cache(self, body: dict[str, Any], usage: Usage) -> Usage:
        """Anthropic prompt caching, as the API reports it: a prefix marked with
        ``cache_control`` (the system prompt, the tools) is written to the cache the first
        time (``cache_creation_input_tokens``) and read from it after
        (``cache_read_input_tokens``)."""
        prefix = {k: body[k] for k in ("tools", "system") if k in body}
        text = json.dumps(prefix, ensure_ascii=False, sort_keys=True)
        if '"cache_control"' not in text:
            return usage
        tokens = min(estimate_json_tokens(list(prefix.values())), usage.prompt_tokens)
        if text in self._cached:
            return replace(usage, cached_tokens=tokens)
        self._cached.add(text)
        return replace(usage, cache_write_tokens=tokens)

    def _conversation(self, request: WireRequest) -> list[dict[str, Any]]:
        """The messages the model answers: with ``previous_response_id``, the stored response's
        conversation, then the new ones (new instructions replace the stored ones)."""
        new = request.messages
        if request.previous_response_id is None:
            return new
        stored = self._stored.get(request.previous_response_id)
        if stored is None:
            raise ValueError(
                f"Previous response with id {request.previous_response_id!r} not found."
            )
        if new and new[0].get("role") == "system":
            rest = stored[1:] if stored and stored[0].get("role") == "system" else stored
            return [new[0], *rest, *new[1:]]
        return [*stored, *new]

    def _store(
        self,
        wire: Wire,
        request: WireRequest,
        response_id: Any,
        messages: list[dict[str, Any]],
        response: ModelResponse,
    ) -> None:
        if wire.name != "responses" or not request.store or not isinstance(response_id, str):
            return
        self._stored[response_id] = [*messages, response.message.wire()]
        while len(self._stored) > STORED:
            self._stored.popitem(last=False)

    async def _paced(self, events: list[bytes]) -> AsyncIterator[bytes]:
        for event in events:
            if self.chunk_delay:
                await asyncio.sleep(self.chunk_delay)
            yield event

    def close(self) -> None:
        self._server.close()

    def __enter__(self) -> ModelServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<ModelServer {self.model.name!r} at {self.base_url}, {self.calls} calls>"


def _as_answer_tool(response: ModelResponse, output: OutputSpec) -> ModelResponse:
    """A final answer that is a JSON object as the answer tool's call (Anthropic structured
    output: the model calls the tool, its input is the answer); anything else as it is."""
    message = response.message
    if message.calls:
        return response
    try:
        value = json.loads(message.text)
    except ValueError:
        return response
    if not isinstance(value, dict):
        return response
    call = {"id": "toolu_" + os.urandom(12).hex(), "type": "function",
            "function": {"name": output.name, "arguments": message.text}}  # fmt: skip
    wire = {**message.wire(), "content": None, "tool_calls": [call]}
    return replace(response, message=coerce_response(wire).message, finish_reason="tool_calls")


def _estimate(
    messages: list[dict[str, Any]], tools: list[dict[str, Any]], response: ModelResponse
) -> Usage:
    prompt = estimate_json_tokens(messages) + (estimate_json_tokens(tools) if tools else 0)
    completion = max(1, estimate_json_tokens(response.message.wire()))
    return Usage(prompt, completion, prompt + completion, estimated=True)


def _streamed_id(wire: Wire, events: list[bytes]) -> str | None:
    """The response id of a Responses stream (in its first event)."""
    if wire.name != "responses" or not events:
        return None
    data = events[0].split(b"data: ", 1)[1]
    found = json.loads(data).get("response", {}).get("id")
    return found if isinstance(found, str) else None


def serve(
    model: ModelLike | None = None,
    *,
    port: int = 0,
    delay: float = 0.0,
    chunk_delay: float = 0.0,
    signed: bool = True,
) -> ModelServer:
    """Serve ``model`` (the travel stand-in by default) over HTTP in the three APIs; its
    reasoning signed on the Responses and Anthropic APIs and checked when sent back
    (``signed=False``: unsigned, unchecked; :mod:`agentnb.observe.signing`)."""
    if model is None:
        # the example domain, by name: the runtime layers never import it (tests/test_boundaries)
        model = importlib.import_module("agentnb.travel").TravelModel()
    return ModelServer(model, port=port, delay=delay, chunk_delay=chunk_delay, signed=signed)
