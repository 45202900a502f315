"""Property: whatever the model does, the runtime raises only documented errors and leaves
the session a valid conversation (invariant 2), checked with the openai SDK's own types."""

from __future__ import annotations

import asyncio
import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import agentnb as an
from agentnb.models import FunctionModel
from tests.helpers import Holder, assert_valid_conversation

_EXECUTED = {"n": 0}


@an.tool
def weather(city: str, day: int = 1) -> dict:
    """Weather; every execution returns a fresh serial number."""
    _EXECUTED["n"] += 1
    return {"city": city, "day": day, "serial": _EXECUTED["n"]}


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
    st.builds(  # valid JSON that is not an object, or nested far too deep
        lambda i, a: ("weather", i, a),
        ids,
        st.sampled_from(["null", "42", '"text"', "[1, 2]", "true", "[" * 50_000 + "]" * 50_000]),
    ),
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


async def play(
    runs: list[list], parallel: bool | None, max_iterations: int, stream: bool
) -> set[str]:
    """Run every scripted run on one session, checking the invariants; the stop reasons."""
    reasons: set[str] = set()
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
        reasons.add(result.stop_reason)
        assert result.stop_reason in an.STOP_REASONS
        assert isinstance(result.events[-1], an.events.RunStopped)
        assert session.lock.holder is None
        wire = session.to_openai()
        assert_valid_conversation(wire)
        assert session.is_valid and session.problems == []
        seqs = [e.seq for e in result.events]  # one counter per session: increasing, no gaps
        assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))
        # Reused ids (the pool is shared across turns and runs) never borrow an earlier result:
        # every execution's serial answers exactly one call, and no answer invents one.
        executed = sorted(
            json.loads(e.content)["serial"]
            for e in result.events
            if isinstance(e, an.events.ToolFinished) and e.ok and e.name == "weather"
        )
        answered = sorted(
            json.loads(m.text)["serial"]
            for m in result.messages
            if isinstance(m, an.ToolMessage) and m.name == "weather" and m.ok
        )
        assert answered == executed
    return reasons


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conversation, st.sampled_from([None, True, False]), st.integers(1, 5), st.booleans())
def test_random_model_behaviour_keeps_the_session_valid(runs, parallel, max_iterations, stream):
    asyncio.run(play(runs, parallel, max_iterations, stream))


def test_the_random_runs_reach_every_way_to_stop():
    """The generator is strong enough to reach these stops (its own derandomized search, so
    it depends on no other test having run first)."""
    seen: set[str] = set()

    @settings(
        max_examples=150,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(conversation, st.sampled_from([None, True, False]), st.integers(1, 5), st.booleans())
    def explore(runs, parallel, max_iterations, stream):
        seen.update(asyncio.run(play(runs, parallel, max_iterations, stream)))

    explore()
    assert {"final_answer", "max_iterations", "cancelled", "error"} <= seen, seen


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 6), st.data())
def test_cancelled_lock_waiters_never_strand_the_others(n, data):
    """Waiters cancelled at any moment (before or after being chosen) never lose a wake-up."""
    cancel = data.draw(st.lists(st.integers(0, n - 1), unique=True, max_size=n))
    timing = data.draw(st.lists(st.booleans(), min_size=n, max_size=n))  # after release?

    async def play() -> None:
        lock = an.Session().lock
        await lock.acquire("holder", "s", "wait", Holder("holder"))
        waiters = [
            asyncio.ensure_future(lock.acquire(f"w{i}", "s", "wait", Holder(f"w{i}")))
            for i in range(n)
        ]
        await asyncio.sleep(0)
        for i in cancel:
            if not timing[i]:
                waiters[i].cancel()
        lock.release(lock.holder)
        for i in cancel:
            if timing[i]:
                waiters[i].cancel()
        for i, w in enumerate(waiters):
            if i in cancel:
                continue
            await asyncio.wait_for(w, 1)
            assert lock.holder == f"w{i}"
            lock.release(lock.holder)
        assert lock.holder is None

    asyncio.run(play())


edit = st.one_of(
    st.just(("append_user",)),
    st.just(("delete_last",)),
    st.just(("replace_last",)),
    st.just(("truncate_one",)),
    st.just(("append_tool",)),
)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conversation, st.lists(st.tuples(st.integers(0, 12), edit), max_size=6))
def test_edits_between_steps_never_leave_an_invalid_conversation(runs, edits):
    """Edits made between steps are applied or refused whole; the session stays valid."""

    def apply(session: an.Session, what: tuple) -> None:
        kind = what[0]
        if kind == "append_user":
            session.append({"role": "user", "content": "edit"})
        elif kind == "delete_last" and len(session):
            session.delete(-1)
        elif kind == "replace_last" and len(session):
            session.replace(-1, {"role": "user", "content": "replaced"})
        elif kind == "truncate_one" and len(session):
            session.truncate(len(session) - 1)
        elif kind == "append_tool":
            session.append({"role": "tool", "tool_call_id": "a", "content": "forged"})

    async def play() -> None:
        session = an.Session()
        for turns in runs[:1]:
            model = script_model([t for t in turns if t[0] in ("text", "calls")], {})
            agent = an.Agent("sys", TOOLS[:3], model=model, max_iterations=3)
            run = agent.start("go", session=session)
            step = 0
            while not run.done:
                for at, what in edits:
                    if at == step and session.active_run is run:  # between steps of the run
                        before = session.to_openai()
                        try:
                            apply(session, what)
                        except (an.InvalidConversation, an.SessionBusy):
                            assert session.to_openai() == before  # refused whole
                try:
                    await run.step()
                except an.AgentnbError as exc:
                    assert isinstance(exc, an.ModelError | an.InvalidConversation), exc
                step += 1
            assert session.lock.holder is None
            assert_valid_conversation(session.to_openai())

    asyncio.run(play())
