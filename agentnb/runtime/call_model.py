"""call_model: send the request, receive the reply, streamed or whole (000 §2.3).

Streaming models produce ``ModelDelta`` events (text and tool-argument fragments, each with
the provider's chunk) as they arrive; the reply is then assembled exactly as a whole one would
be, and the model's stream is closed whatever happens. Usage the model does not report is
estimated and marked ``estimated=True``.
"""

from __future__ import annotations

import asyncio
import time

from ..errors import AgentnbError, ConfigurationError, ModelCallFailed
from ..events import ModelDelta, ModelResponded
from ..models.base import (
    Delta,
    ModelLike,
    ModelRequest,
    ModelResponse,
    ReplyAssembler,
    Usage,
    coerce_response,
)
from .state import RunState


async def call_model(state: RunState, request: ModelRequest) -> ModelResponse:
    model = state.agent.model
    if model is None:  # set to None between steps
        raise ConfigurationError(f"agent {state.agent.name!r} has no model; set agent.model")
    started = time.monotonic()
    held = not request.shared  # a shared list is built once anyway
    if held:
        request.hold()
    try:
        if model.streaming:
            response = await _streamed(state, model, request)
        else:
            response = await model.complete(request)
            if not isinstance(response, ModelResponse):
                response = coerce_response(response, model.name)
    except (AgentnbError, asyncio.CancelledError):
        raise
    except Exception as exc:
        raise ModelCallFailed(f"model {model.name!r} raised {type(exc).__name__}: {exc}") from exc
    finally:
        if held:
            request.release()
    now = time.monotonic()
    latency = now - started
    usage = response.usage
    record = state.record
    if usage is None:
        completion = response.message.tokens
        prompt = request.estimate
        usage = Usage(prompt, completion, prompt + completion, True)
        record.unmetered += 1
    tokens = state.tokens  # inline: this runs every iteration
    tokens[0] += usage.prompt_tokens
    tokens[1] += usage.completion_tokens
    tokens[2] += usage.total_tokens
    if usage.cached_tokens or usage.cache_write_tokens or usage.reasoning_tokens:
        record.usage = record.usage + usage  # the API's details: summed whole (rare path)
    else:
        record.usage = Usage(
            tokens[0],
            tokens[1],
            tokens[2],
            record.usage.estimated or usage.estimated,
            record.usage.cached_tokens,
            record.usage.cache_write_tokens,
            record.usage.reasoning_tokens,
        )
    if response.cached:
        record.cached_calls += 1
        record.cached = usage if record.cached is None else record.cached + usage
    raw = response.raw  # a provider's reply names itself (no call for models without one)
    state.emit(
        ModelResponded,
        now,
        message=response.message,
        usage=usage,
        latency=latency,
        finish_reason=response.finish_reason,
        response_id=raw["id"] if raw is not None and type(raw.get("id")) is str else None,
        response_model=response.model,
    )
    return response


async def _streamed(state: RunState, model: ModelLike, request: ModelRequest) -> ModelResponse:
    assembler = ReplyAssembler()
    stream = model.stream(request)
    try:
        async for delta in stream:
            assembler.add(delta)
            _emit_delta(state, delta)
    finally:
        aclose = getattr(stream, "aclose", None)
        if aclose is not None:  # close the provider's stream (and its connection) at once
            await aclose()
    response = assembler.result(model.name)
    finish = getattr(model, "finish_stream", None)  # e.g. text actions found in streamed text
    return finish(response, request) if finish is not None else response


def _emit_delta(state: RunState, delta: Delta) -> None:
    raw = delta.raw
    if delta.reasoning:
        state.emit(ModelDelta, kind="reasoning", delta=delta.reasoning, raw=raw)
        raw = None
    if delta.text:
        state.emit(ModelDelta, kind="text", delta=delta.text, raw=raw)
        raw = None
    if delta.tool_index is not None:
        if delta.tool_name:
            state.emit(
                ModelDelta,
                kind="tool_call",
                delta=delta.tool_name,
                index=delta.tool_index,
                call_id=delta.tool_id,
                name=delta.tool_name,
                raw=raw,
            )
            raw = None
        if delta.arguments:
            state.emit(
                ModelDelta, kind="tool_args", delta=delta.arguments, index=delta.tool_index, raw=raw
            )
            raw = None
    if raw is not None:  # a chunk with no content (the role, the finish): shown all the same
        state.emit(ModelDelta, kind="chunk", delta="", raw=raw)
