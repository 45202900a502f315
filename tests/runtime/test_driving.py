"""run / stream / step drive one loop; the lock serialises runs on one session."""

from __future__ import annotations

import asyncio

import pytest

import agentnb as an
from agentnb.models import FunctionModel, ScriptedModel
from tests.helpers import assert_valid_conversation, call, calls, eventually


async def test_two_concurrent_runs_on_one_session_do_not_interleave(tools):
    gate = asyncio.Event()

    async def reply(request):
        await gate.wait()
        if request.messages[-1]["role"] == "user":
            text = request.messages[-1]["content"]
            return calls(call("c-" + text, "search_weather", city=text, date="2025-01-10"))
        return "done " + request.messages[-1]["tool_call_id"]

    agent = an.Agent("", tools, model=FunctionModel(reply))
    session = an.Session()
    first = asyncio.create_task(agent.run("北京", session=session))
    second = asyncio.create_task(agent.run("上海", session=session))
    await eventually(lambda: session.lock.holder)
    assert session.lock.holder == session.runs[0].run_id and len(session.runs) == 1
    gate.set()
    await asyncio.gather(first, second)
    roles = [(m["role"], m.get("content")) for m in session.to_openai()]
    assert roles[0] == ("user", "北京") and roles[3] == ("assistant", "done c-北京")
    assert roles[4] == ("user", "上海") and roles[7] == ("assistant", "done c-上海")
    assert [r.start for r in session.runs] == [0, 4]
    assert_valid_conversation(session.to_openai())


async def test_reject_policy_raises_session_busy(tools):
    gate = asyncio.Event()

    async def reply(request):
        await gate.wait()
        return "ok"

    session = an.Session(lock_policy="reject")
    agent = an.Agent("", tools, model=FunctionModel(reply))
    first = asyncio.create_task(agent.run("a", session=session))
    await eventually(lambda: session.lock.holder)
    with pytest.raises(an.SessionBusy, match="is still running") as info:
        await agent.run("b", session=session)
    assert info.value.holder == session.runs[0].run_id
    assert len(session) == 1  # the refused run touched nothing
    gate.set()
    await first


async def test_a_paused_stepper_refuses_a_second_run_instead_of_hanging(tools):
    agent = an.Agent("", tools, model=ScriptedModel(["ok"]))
    session = an.Session()
    run = agent.start("a", session=session)
    await run.step()
    with pytest.raises(an.SessionBusy, match="paused between steps"):
        await an.Agent("", tools, model=ScriptedModel(["x"])).run("b", session=session)
    run.cancel()
    assert run.done and run.result.stop_reason == "cancelled"
    assert (
        await an.Agent("", tools, model=ScriptedModel(["x"])).run("b", session=session)
    ).output == "x"


async def test_stepping_through_all_seven_stages_with_edits_between_steps(tools):
    model = ScriptedModel(
        [calls(call("c1", "search_weather", city="北京", date="2025-01-10")), "周六北京晴。"]
    )
    agent = an.Agent("你是差旅助手。", tools, model=model)
    session = an.Session()
    run = agent.start("周五北京天气？", session=session)
    seen = []
    assert run.next_stage == "restore"
    event = await run.step()
    seen.append((event.stage, type(event).__name__))
    # Edit between steps: the user changes the question and the instructions.
    session.edit(0, content="周六北京天气？")
    agent.instructions = "你是差旅助手。只用中文回答。"
    while not run.done:
        stage = run.next_stage
        event = await run.step()
        assert event.stage == stage
        seen.append((stage, type(event).__name__))
    assert seen == [
        ("restore", "ContextRestored"),
        ("assemble", "RequestAssembled"),
        ("call_model", "ModelResponded"),
        ("decide", "Decided"),
        ("execute_tools", "ToolsExecuted"),
        ("check_stop", "StopChecked"),
        ("assemble", "RequestAssembled"),
        ("call_model", "ModelResponded"),
        ("decide", "Decided"),
        ("check_stop", "StopChecked"),
        ("persist", "RunStopped"),
    ]
    first = model.requests[0].messages
    assert first[0]["content"] == "你是差旅助手。只用中文回答。"
    assert first[1] == {"role": "user", "content": "周六北京天气？"}
    assert run.result.stop_reason == "final_answer"
    with pytest.raises(an.RunStateError, match="is over"):
        await run.step()


async def test_tool_edit_between_steps_takes_effect(tools):
    model = ScriptedModel(
        [calls(call("c1", "search_weather", city="北京", date="2025-01-10")), "ok"]
    )
    agent = an.Agent("", tools, model=model)
    run = agent.start("x")
    while run.next_stage != "execute_tools":
        await run.step()

    @an.tool(name="search_weather")
    def fake_weather(city: str, date: str) -> str:
        """Replaced."""
        return "暴雪"

    agent.tools.remove("search_weather")
    agent.tools.add(fake_weather)
    result = await run.finish()
    assert result.session.to_openai()[2]["content"] == "暴雪"
    assert [t["function"]["name"] for t in model.requests[1].tools][-1] == "search_weather"


async def test_edit_that_breaks_pairing_is_refused_with_a_readable_error(tools):
    model = ScriptedModel(
        [calls(call("c1", "search_weather", city="北京", date="2025-01-10")), "ok"]
    )
    run = an.Agent("", tools, model=model).start("x")
    while run.next_stage != "check_stop":
        await run.step()
    before = run.session.to_openai()
    with pytest.raises(an.InvalidConversation, match="c1 have no tool result"):
        run.session.delete(2)  # drop the tool result: the run could not survive it
    assert run.session.to_openai() == before  # refused before anything changed
    result = await run.finish()
    assert result.stop_reason == "final_answer"
    assert run.session.is_valid


async def test_stream_yields_deltas_and_tool_events_live(tools):
    model = ScriptedModel(
        [
            calls(call("c1", "search_weather", city="北京", date="2025-01-10")),
            "北京周五晴，-3到5度。",
        ],
        stream=True,
        chunk_size=4,
    )
    agent = an.Agent("", tools, model=model)
    events = [e async for e in agent.stream("北京天气")]
    kinds = [type(e).__name__ for e in events]
    assert kinds[0] == "RunStarted" and kinds[-1] == "RunStopped"
    deltas = [e for e in events if isinstance(e, an.events.ModelDelta)]
    assert "".join(d.delta for d in deltas if d.kind == "text") == "北京周五晴，-3到5度。"
    args = "".join(d.delta for d in deltas if d.kind == "tool_args")
    assert args == '{"city": "北京", "date": "2025-01-10"}'
    assert [d.name for d in deltas if d.kind == "tool_call"] == ["search_weather"]
    assert kinds.index("ToolStarted") < kinds.index("ToolFinished")
    assert [e.seq for e in events] == list(range(events[0].seq, events[0].seq + len(events)))
    assert events[-1].output == "北京周五晴，-3到5度。"


async def test_stream_is_live_not_batched():
    release = asyncio.Event()

    @an.tool
    async def slow(city: str) -> str:
        """Slow."""
        await release.wait()
        return "ok"

    agent = an.Agent("", [slow], model=ScriptedModel([calls(call("s", "slow", city="x")), "done"]))
    seen = []
    async for event in agent.stream("x"):
        seen.append(type(event).__name__)
        if isinstance(event, an.events.ToolStarted):
            assert "ToolFinished" not in seen
            release.set()
    assert seen[-1] == "RunStopped"


async def test_streaming_subscribers_see_every_event(tools):
    session = an.Session()
    got = []
    unsubscribe = session.subscribe(got.append)
    result = await an.Agent("", tools, model=ScriptedModel(["hi"])).run("x", session=session)
    assert got == result.events
    unsubscribe()
    session.append({"role": "user", "content": "more"})
    assert len(got) == len(result.events)


async def test_failing_subscriber_warns_and_the_run_goes_on(tools):
    session = an.Session()
    session.subscribe(lambda e: 1 / 0)
    with pytest.warns(an.session.SubscriberError if hasattr(an, "session") else Warning):
        result = await an.Agent("", tools, model=ScriptedModel(["hi"])).run("x", session=session)
    assert result.output == "hi"


def test_run_sync_outside_a_loop(tools):
    result = an.Agent("", tools, model=ScriptedModel(["hi"])).run_sync("x")
    assert result.output == "hi"


async def test_run_sync_inside_a_loop_says_what_to_do(tools):
    with pytest.raises(an.RunStateError, match=r"await agent\.run"):
        an.Agent("", tools, model=ScriptedModel(["hi"])).run_sync("x")


async def test_continue_a_session_without_new_input(tools):
    session = an.Session([{"role": "user", "content": "北京天气？"}])
    result = await an.Agent("", tools, model=ScriptedModel(["晴"])).run(session=session)
    assert [m["role"] for m in session.to_openai()] == ["user", "assistant"]
    assert result.messages[0].text == "晴"


async def test_history_is_restored_and_sent(tools):
    session = an.Session()
    agent = an.Agent("", tools, model=ScriptedModel(["好的，上海出发。", "北京的航班如下……"]))
    await agent.run("我从上海出发", session=session)
    await agent.run("帮我看看北京航班怎么样", session=session)
    sent = agent.model.requests[1].messages
    assert [m["content"] for m in sent] == [
        "我从上海出发",
        "好的，上海出发。",
        "帮我看看北京航班怎么样",
    ]
    restored = [e for e in session.runs]
    assert len(restored) == 2 and restored[1].start == 2


async def test_a_run_on_an_invalid_session_is_refused_before_touching_it(tools):
    session = an.Session(
        [
            {"role": "user", "content": "x"},
            calls(call("c1", "search_weather", city="北京", date="周五")),
        ]
    )
    with pytest.raises(an.InvalidConversation, match="c1 have no tool result yet") as info:
        await an.Agent("", tools, model=ScriptedModel(["ok"])).run("next", session=session)
    assert len(session) == 2 and session.lock.holder is None
    assert info.value.result.stop_reason == "error"
    session.repair()
    assert (
        await an.Agent("", tools, model=ScriptedModel(["ok"])).run("next", session=session)
    ).output == "ok"


async def test_leaving_a_stream_early_cancels_the_run_cleanly():
    import contextlib

    @an.tool
    async def slow(city: str) -> str:
        """Slow."""
        await asyncio.sleep(30)
        return "never"

    session = an.Session()
    agent = an.Agent("", [slow], model=ScriptedModel([calls(call("s", "slow", city="x")), "never"]))
    async with contextlib.aclosing(agent.stream("x", session=session)) as events:
        async for event in events:
            if isinstance(event, an.events.ToolStarted):
                break
    assert session.lock.holder is None
    assert session.runs[-1].stop_reason == "cancelled"
    assert_valid_conversation(session.to_openai())
    assert "cancelled" in session.to_openai()[-1]["content"]


async def test_the_lock_hold_is_the_one_home_of_the_active_run_and_paused_is_derived():
    session = an.Session()
    agent = an.Agent("x", model=ScriptedModel(["done"]))
    run = agent.start("hi", session=session)
    assert session.active_run is None and session.lock.hold is None
    await run.step()  # restore: the run now holds the session, waiting between steps
    hold = session.lock.hold
    assert hold is not None and hold.run is run and hold.run_id == run.id
    assert session.active_run is run and hold.paused and session.lock.paused
    seen = []
    session.subscribe(lambda e: seen.append(session.lock.paused))
    await run.finish()
    assert seen and not any(seen[:-1]), "a run mid-stage is not paused"
    assert session.active_run is None and session.lock.hold is None


def test_a_finished_run_is_freed_without_the_cycle_collector():
    import gc
    import weakref

    gc.collect()
    gc.disable()
    try:
        session = an.Session()
        agent = an.Agent("x", model=ScriptedModel(["done"]))
        run = agent.start("hi", session=session)
        asyncio.run(run.finish())
        state = weakref.ref(run.state)
        gone = weakref.ref(run)
        session.runs.clear()
        del run
        assert gone() is None and state() is None, "a run <-> state reference cycle is back"
    finally:
        gc.enable()


async def test_the_run_record_is_the_one_home_of_the_outcome():
    session = an.Session()
    agent = an.Agent("x", model=ScriptedModel(["done"]))
    result = await agent.run("hi", session=session)
    record = session.runs[-1]
    assert result.record is record
    assert (result.output, result.stop_reason, result.iterations) == ("done", "final_answer", 1)
    assert (record.output, record.stop_reason, record.stage) == (
        "done",
        "final_answer",
        "check_stop",
    )
    stopped = result.events[-1]
    assert stopped.type == "RunStopped" and stopped.reason == record.stop_reason
    assert stopped.usage == record.usage == result.usage and isinstance(
        record.usage, an.models.Usage
    )


async def test_a_run_used_without_await_says_to_await_it():
    import asyncio

    agent = an.Agent(model=an.models.ScriptedModel([{"role": "assistant", "content": "好"}]))
    pending = agent.run("你好")
    with pytest.raises(AttributeError, match=r"write `result = await agent\.run\(\.\.\.\)`"):
        pending.output  # noqa: B018
    assert "not awaited" in repr(pending) and "await agent.run" in repr(pending)
    assert not hasattr(pending, "stop_reason")
    result = await pending  # still the run: awaiting it works afterwards
    assert result.output == "好"
    task = asyncio.ensure_future(agent.run("再来", session=result.session))
    with pytest.raises(an.errors.UnexpectedModelCall):
        await task  # a task of it runs it (the script has one reply only)


def test_asyncio_run_accepts_a_run_as_it_accepts_a_coroutine():
    import asyncio

    agent = an.Agent(model=an.models.ScriptedModel([{"role": "assistant", "content": "好"}]))
    assert asyncio.run(agent.run("你好")).output == "好"
