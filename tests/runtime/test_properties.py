"""Property: whatever the model does, the runtime raises only documented errors and leaves
the session a valid conversation (invariant 2), checked with the openai SDK's own types."""

from __future__ import annotations

import asyncio
import json

from helpers import assert_valid_conversation
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import agentnb as an
from agentnb.models import FunctionModel


@an.tool
def weather(city: str, day: int = 1) -> dict:
    """Weather."""
    return {"city": city, "day": day}


@an.tool
async def slow(city: str) -> str:
    """Takes a moment."""
    await asyncio.sleep(0.001)
    return city


@an.tool
def broken(city: str) -> str:
    """Raises."""
    raise RuntimeError("down")


@an.tool
async def cancel_task(city: str) -> str:
    """Cancels the task running the agent (like Ctrl-C on a cell)."""
    _CURRENT["task"].cancel()
    await asyncio.sleep(0.01)
    return "not reached"


@an.tool
async def stop_run(city: str) -> str:
    """Calls run.cancel() mid-batch (like a Stop button)."""
    _CURRENT["run"].cancel()
    await asyncio.sleep(0.01)
    return "not reached"


_CURRENT: dict = {}
TOOLS = [weather, slow, broken, cancel_task, stop_run]

ids = st.sampled_from(["a", "b", "c", ""])  # small pool: duplicates and missing ids happen
tool_call = st.one_of(
    st.builds(lambda i, c: ("weather", i, json.dumps({"city": c})), ids, st.text(max_size=5)),
    st.builds(lambda i: ("weather", i, '{"city": 1, "day": "x"}'), ids),  # invalid arguments
    st.builds(lambda i: ("weather", i, '{"city": '), ids),  # malformed JSON
    st.builds(lambda i: ("teleport", i, "{}"), ids),  # unknown tool
    st.builds(lambda i: ("slow", i, '{"city": "x"}'), ids),
    st.builds(lambda i: ("broken", i, '{"city": "x"}'), ids),
    st.builds(lambda i: ("cancel_task", i, '{"city": "x"}'), ids),
    st.builds(lambda i: ("stop_run", i, '{"city": "x"}'), ids),
)
turn = st.one_of(
    st.tuples(st.just("text"), st.text(max_size=20)),
    st.tuples(st.just("calls"), st.lists(tool_call, min_size=1, max_size=4), st.booleans()),
    st.tuples(st.just("raise"), st.sampled_from([ValueError, ConnectionError, TimeoutError])),
    st.tuples(st.just("run_cancel")),
)
conversation = st.lists(st.lists(turn, max_size=6), min_size=1, max_size=3)


def script_model(turns: list, holder: dict) -> FunctionModel:
    queue = list(turns)

    def reply(request):
        if not queue:
            return "fin"
        kind, *rest = queue.pop(0)
        if kind == "text":
            return {"role": "assistant", "content": rest[0]}
        if kind == "raise":
            raise rest[0]("model failure")
        if kind == "run_cancel":
            holder["run"].cancel()
            return "after cancel"
        tool_calls = [
            {"id": i, "type": "function", "function": {"name": n, "arguments": a}}
            for n, i, a in rest[0]
        ]
        return {
            "role": "assistant",
            "content": "thinking" if rest[1] else None,
            "tool_calls": tool_calls,
        }

    return FunctionModel(reply)


async def play(runs: list[list], parallel: bool | None, max_iterations: int, stream: bool) -> None:
    session = an.Session()
    for turns in runs:
        holder: dict = {}
        model = script_model(turns, holder)
        model.streaming = stream
        agent = an.Agent(
            "sys", TOOLS, model=model, max_iterations=max_iterations, parallel_tool_calls=parallel
        )
        run = agent.start("go", session=session)
        holder["run"] = _CURRENT["run"] = run
        task = asyncio.ensure_future(run.finish())
        _CURRENT["task"] = task
        try:
            result = await task
        except an.AgentnbError as exc:
            assert isinstance(exc, an.ModelError | an.InvalidConversation), exc
            result = exc.result
        except asyncio.CancelledError:
            result = run.result
        assert result is not None and run.done
        STATS[result.stop_reason] = STATS.get(result.stop_reason, 0) + 1
        assert result.stop_reason in an.STOP_REASONS
        assert isinstance(result.events[-1], an.events.RunStopped)
        assert session.lock.holder is None
        wire = session.to_openai()
        assert_valid_conversation(wire)
        assert session.is_valid and session.problems == []
        seqs = [e.seq for e in result.events]  # one counter per session: increasing, no gaps
        assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))


STATS: dict[str, int] = {}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conversation, st.sampled_from([None, True, False]), st.integers(1, 5), st.booleans())
def test_random_model_behaviour_keeps_the_session_valid(runs, parallel, max_iterations, stream):
    asyncio.run(play(runs, parallel, max_iterations, stream))


def test_the_property_run_covered_every_way_to_stop():
    # Runs after the property test in file order: the random runs must have reached these.
    if not STATS:
        import pytest

        pytest.skip("run together with the property test")
    assert {"final_answer", "max_iterations", "cancelled", "error"} <= set(STATS), STATS
