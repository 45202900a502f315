"""call_model: send the request, receive the reply, streamed or whole (000 §2.3).

Streaming models produce ``ModelDelta`` events (text and tool-argument fragments) as they
arrive; the reply is then assembled exactly as a whole one would be. Usage the model does
not report is estimated and marked ``estimated=True``.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

from ..errors import AgentnbError, ConfigurationError, ModelCallFailed
from ..events import ModelDelta, ModelResponded
from ..models.base import ModelResponse, ReplyAssembler, Usage, coerce_response

if TYPE_CHECKING:
    from .run import Run


async def call_model(run: Run) -> None:
    model = run.agent.model
    if model is None:
        raise ConfigurationError(
            f"agent {run.agent.name!r} has no model; pass model=... (for example "
            "an.models.ScriptedModel([...]) or an.travel.TravelModel())"
        )
    request = run.request
    assert request is not None
    run.session.snapshots.append(request)
    started = time.monotonic()
    try:
        if model.streaming:
            assembler = ReplyAssembler()
            async for delta in model.stream(request):
                assembler.add(delta)
                _emit_delta(run, delta.text, delta.reasoning, delta)
            response = assembler.result(model.name)
        else:
            response = await model.complete(request)
            if not isinstance(response, ModelResponse):
                response = coerce_response(response, model.name)
    except (AgentnbError, asyncio.CancelledError):
        raise
    except Exception as exc:
        raise ModelCallFailed(f"model {model.name!r} raised {type(exc).__name__}: {exc}") from exc
    latency = time.monotonic() - started
    usage = response.usage
    if usage is None:
        completion = response.message.tokens
        prompt = run.prompt_estimate
        usage = Usage(prompt, completion, prompt + completion, True)
    run.add_usage(usage)
    run.response = response
    run.emit(
        ModelResponded,
        message=response.message,
        usage=usage,
        latency=latency,
        finish_reason=response.finish_reason,
    )


def _emit_delta(run: Run, text: str, reasoning: str, delta: object) -> None:
    from ..models.base import Delta

    assert isinstance(delta, Delta)
    if reasoning:
        run.emit(ModelDelta, kind="reasoning", delta=reasoning)
    if text:
        run.emit(ModelDelta, kind="text", delta=text)
    if delta.tool_index is not None:
        if delta.tool_name:
            run.emit(
                ModelDelta,
                kind="tool_call",
                delta=delta.tool_name,
                index=delta.tool_index,
                call_id=delta.tool_id,
                name=delta.tool_name,
            )
        if delta.arguments:
            run.emit(ModelDelta, kind="tool_args", delta=delta.arguments, index=delta.tool_index)
