"""call_model with streamed replies: every chunk is visible, and a model may finish a stream."""

from __future__ import annotations

import agentnb as an
from agentnb.models import Delta, Model, ModelResponse


class Chunks(Model):
    """Streams a role-only chunk, two text pieces and a finish chunk, each with its raw SSE."""

    name, streaming = "chunks", True

    async def stream(self, request):  # type: ignore[override]
        yield Delta(raw='{"choices":[{"delta":{"role":"assistant"}}]}')
        yield Delta(text="你好", raw='{"choices":[{"delta":{"content":"你好"}}]}')
        yield Delta(text="！", raw='{"choices":[{"delta":{"content":"！"}}]}')
        yield Delta(finish_reason="stop", raw='{"choices":[{"finish_reason":"stop"}]}')

    def finish_stream(self, response: ModelResponse, request: object) -> ModelResponse:
        return ModelResponse(
            response.message, response.usage, response.finish_reason, self.name,
            repairs=("checked the streamed text",),
        )  # fmt: skip


async def test_every_chunk_is_an_event_and_the_model_finishes_the_stream():
    result = await an.Agent("", model=Chunks()).run("hi")
    deltas = result.trace.of_type(an.events.ModelDelta)
    assert [(d.kind, d.delta) for d in deltas] == [
        ("chunk", ""),
        ("text", "你好"),
        ("text", "！"),
        ("chunk", ""),
    ]
    assert all(d.raw for d in deltas)  # each keeps its chunk verbatim
    assert result.output == "你好！"
    decided = result.trace.of_type(an.events.Decided)[0]
    assert decided.problems == ("checked the streamed text",)


async def test_a_streamed_run_is_seen_while_it_goes_on():
    """The test doubles yield to the loop between fragments: a consumer sees them live."""
    model = an.models.ScriptedModel(["天气：北京周五晴，-3～5°C。"], stream=True, chunk_size=4)
    session = an.Session()
    seen_while_running = []
    async for event in an.Agent("", model=model).stream("北京周五天气？", session=session):
        if isinstance(event, an.events.ModelDelta):
            seen_while_running.append(session.active_run is not None)
    assert len(seen_while_running) >= 4 and all(seen_while_running)
