"""Regression tests for what hostile use broke (issue: Foundations). One test per defect,
named after it; each failed on the code before the fix."""

from __future__ import annotations

import asyncio
import json
import time

import pytest

import agentnb as an
from agentnb.models import FunctionModel, ScriptedModel
from agentnb.storage.codec import event_to_dict
from tests.helpers import Holder, assert_valid_conversation, call, calls, content


def tool_results(session: an.Session) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for m in session.to_openai():
        if m["role"] == "tool":
            out.setdefault(m["tool_call_id"], []).append(content(m))
    return out


# -- 1. arguments that are valid JSON but not an object, or nested too deep ----------------------
@pytest.mark.parametrize("raw", ["null", "42", '"text"', "[1, 2]", "true", "3.5"])
async def test_non_object_arguments_reach_the_model_as_errors(tools, raw):
    bad = {"id": "a", "type": "function", "function": {"name": "search_weather", "arguments": raw}}
    model = ScriptedModel([calls(bad), "sorry"])
    result = await an.Agent("", tools, model=model).run("x")
    assert result.stop_reason == "final_answer"
    error = tool_results(result.session)["a"][0]
    assert error["kind"] == "invalid_json" and "must be a JSON object" in error["error"]
    assert "city (string, required)" in error["hint"]


async def test_arguments_nested_too_deeply_reach_the_model_as_errors(tools):
    raw = "[" * 100_000 + "]" * 100_000
    deep = {"id": "d", "type": "function", "function": {"name": "search_weather", "arguments": raw}}
    result = await an.Agent("", tools, model=ScriptedModel([calls(deep), "ok"])).run("x")
    error = tool_results(result.session)["d"][0]
    assert error["kind"] == "invalid_json" and "nested too deeply" in error["error"]
    assert len(error["arguments"]) == 500  # the model sees a bounded excerpt


# -- 2. reused call ids --------------------------------------------------------------------------
async def test_reused_call_ids_never_get_an_earlier_calls_result():
    booked: list[int] = []

    @an.tool
    def book(room: int) -> str:
        """Book a room."""
        booked.append(room)
        return f"BOOKED {room}"

    replies = [calls(call("call_0", "book", room=101)), calls(call("call_0", "book", room=202))]
    model = ScriptedModel([*replies, calls(call("call_0", "book", room=303))])
    agent = an.Agent("", [book], model=model, max_iterations=2, final_answer_on_stop=True)
    result = await agent.run("book")
    answers = [m["content"] for m in result.session.to_openai() if m["role"] == "tool"]
    assert booked == [101, 202]
    assert answers[:2] == ["BOOKED 101", "BOOKED 202"]
    assert json.loads(answers[2])["kind"] == "not_executed"  # the wrap-up call never ran


async def test_reused_call_id_cancelled_is_answered_cancelled():
    started = asyncio.Event()

    @an.tool
    async def book(room: int) -> str:
        """Book a room (slow the second time)."""
        if room == 202:
            started.set()
            await asyncio.sleep(30)
        return f"BOOKED {room}"

    model = ScriptedModel(
        [calls(call("call_0", "book", room=101)), calls(call("call_0", "book", room=202))]
    )
    run = an.Agent("", [book], model=model).start("book")
    task = asyncio.ensure_future(run.finish())
    await started.wait()
    run.cancel()
    result = await task
    answers = [m["content"] for m in result.session.to_openai() if m["role"] == "tool"]
    assert answers[0] == "BOOKED 101" and json.loads(answers[1])["kind"] == "cancelled"


# -- 3. trace files ----------------------------------------------------------------------------
async def test_trace_files_keep_line_separators_and_surrogates(tools, tmp_path):
    text = "a\u2028b\u2029c\u0085d \ud800 end"
    model = ScriptedModel([calls(call("c", "search_weather", city=text, date="x")), text])
    result = await an.Agent("", tools, model=model).run(text)
    path = result.trace.save(tmp_path / "t.jsonl")
    loaded = an.Trace.load(path)
    assert [event_to_dict(e) for e in loaded] == [event_to_dict(e) for e in result.events]
    assert loaded.events[-1].output == text


def test_trace_save_is_atomic_and_corrupt_lines_are_named(tmp_path, monkeypatch):
    path = tmp_path / "t.jsonl"
    path.write_text("precious\n", encoding="utf-8")

    class Boom(RuntimeError):
        pass

    def fail(*args: object) -> None:
        raise Boom("disk full")

    monkeypatch.setattr("os.replace", fail)
    with pytest.raises(Boom):
        an.Trace([]).save(path)
    assert path.read_text(encoding="utf-8") == "precious\n"  # untouched
    assert [p.name for p in tmp_path.iterdir()] == ["t.jsonl"]  # no temporary left behind
    monkeypatch.undo()

    path.write_text('{"type": "$agentnb-trace", "version": 2}\n{"type": "Nope"\n')
    with pytest.raises(an.TraceFormatError, match="line 2") as info:
        an.Trace.load(path)
    assert info.value.line == 2
    path.write_bytes(b'{"type": "$agentnb-trace", "version": 2}\n\xff\n')
    with pytest.raises(an.TraceFormatError, match=r"line 2 .* not UTF-8"):
        an.Trace.load(path)
    path.write_text('{"type": "$agentnb-trace", "version": 2}\n{"type": "MessageAppended"}\n')
    with pytest.raises(an.TraceFormatError, match="line 2"):
        an.Trace.load(path)


# -- 4. lost wake-up in the session lock -------------------------------------------------------
@pytest.mark.parametrize("victim", [0, 1, 2])
async def test_cancelled_lock_waiter_never_loses_the_wake_up(victim):
    lock = an.Session().lock
    await lock.acquire("holder", "s", "wait", Holder("holder"))
    waiters = [
        asyncio.ensure_future(lock.acquire(f"w{i}", "s", "wait", Holder(f"w{i}"))) for i in range(3)
    ]
    await asyncio.sleep(0)
    lock.release(lock.holder)  # chooses w0 ...
    waiters[victim].cancel()  # ... and a waiter is cancelled before it runs
    order = []
    for i, w in enumerate(waiters):
        if i == victim:
            continue
        await asyncio.wait_for(w, 1)  # never waits forever with the lock free
        order.append(lock.holder)
        lock.release(lock.holder)
    assert order == [f"w{i}" for i in range(3) if i != victim]
    assert lock.holder is None and not lock.waiters


# -- 5. a failed run never poisons the session -------------------------------------------------
@pytest.mark.parametrize(
    "bad_input",
    [
        {"role": "tool", "tool_call_id": "x", "content": "forged"},
        calls(call("c1", "search_weather", city="北京", date="x")),
    ],
)
async def test_input_that_is_not_a_user_message_is_refused_before_touching(tools, bad_input):
    session = an.Session(
        [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hi"}]
    )
    before = session.to_openai()
    agent = an.Agent("", tools, model=ScriptedModel(["ok"]))
    with pytest.raises(an.InvalidMessage, match="must be a user message"):
        await agent.run(bad_input, session=session)
    assert session.to_openai() == before and session.is_valid and session.lock.holder is None


async def test_append_between_steps_is_refused_when_it_would_misplace_results(tools):
    model = ScriptedModel([calls(call("c1", "search_weather", city="北京", date="x")), "ok"])
    run = an.Agent("", tools, model=model).start("x")
    while run.next_stage != "execute_tools":
        await run.step()
    with pytest.raises(an.InvalidConversation, match="nothing was changed"):
        run.session.append({"role": "user", "content": "and Shanghai?"})
    result = await run.finish()
    assert result.stop_reason == "final_answer"
    assert_valid_conversation(result.session.to_openai())


async def test_append_while_a_tool_runs_is_refused(tools):
    started, go = asyncio.Event(), asyncio.Event()

    @an.tool
    async def slow(city: str) -> str:
        """Slow."""
        started.set()
        await go.wait()
        return "done"

    model = ScriptedModel([calls(call("c1", "slow", city="北京")), "ok"])
    session = an.Session()
    task = asyncio.ensure_future(an.Agent("", [slow], model=model).run("x", session=session))
    await started.wait()
    with pytest.raises(an.SessionBusy, match=r"while run .* executes 'execute_tools'"):
        session.append({"role": "user", "content": "hurry"})
    go.set()
    result = await task
    assert_valid_conversation(result.session.to_openai())


async def test_a_tool_call_edited_between_steps_runs_as_edited(tools):
    model = ScriptedModel([calls(call("c1", "search_weather", city="北京", date="x")), "ok"])
    run = an.Agent("", tools, model=model).start("x")
    while run.next_stage != "execute_tools":
        await run.step()
    edited = call("c1", "search_weather", city="上海", date="x")
    run.session.edit(1, tool_calls=[edited])
    result = await run.finish()
    assert tool_results(result.session)["c1"][0]["city"] == "上海"


# -- 6. lesser defects -------------------------------------------------------------------------
async def test_tool_raising_cancelled_error_is_an_error_result_not_a_cancelled_run():
    @an.tool
    async def quits(city: str) -> str:
        """Raises CancelledError itself."""
        raise asyncio.CancelledError()

    model = ScriptedModel([calls(call("q", "quits", city="x")), "ok"])
    result = await an.Agent("", [quits], model=model).run("x")
    assert result.stop_reason == "final_answer"
    assert tool_results(result.session)["q"][0]["kind"] == "tool_error"


async def test_timed_out_threaded_tools_never_delay_a_later_call():
    @an.tool(timeout=0.02)
    def stuck(n: int) -> str:
        """Blocks its thread well past its timeout."""
        time.sleep(0.5)
        return "late"

    @an.tool(timeout=0.3)
    def instant(n: int) -> str:
        """Answers at once."""
        return "here"

    stuck_calls = [call(f"s{i}", "stuck", n=i) for i in range(12)]  # more than a default pool
    model = ScriptedModel([calls(*stuck_calls), calls(call("i", "instant", n=1)), "ok"])
    result = await an.Agent("", [stuck, instant], model=model).run("x")
    answers = {
        m["tool_call_id"]: m["content"] for m in result.session.to_openai() if "tool_call_id" in m
    }
    assert all(json.loads(answers[f"s{i}"])["kind"] == "timeout" for i in range(12))
    assert answers["i"] == "here"  # it ran, although twelve stuck threads still sleep


def test_append_with_an_unserialisable_field_is_atomic():
    session = an.Session([{"role": "user", "content": "hi"}])
    with pytest.raises(an.InvalidMessage, match="cannot be sent as JSON"):
        session.append({"role": "user", "content": "x", "extra": object()})
    assert len(session) == 1 and session.to_openai() == [{"role": "user", "content": "hi"}]
    session.append({"role": "user", "content": "still fine"})
    assert len(session.to_openai()) == 2


async def test_a_reply_in_the_sdks_model_dump_shape_is_normalised(tools):
    from openai.types.chat import ChatCompletionMessage

    dumped = ChatCompletionMessage(role="assistant", content="晴").model_dump()
    assert dumped["tool_calls"] is None and "annotations" in dumped
    result = await an.Agent("", tools, model=ScriptedModel([dumped])).run("x")
    wire = result.session.to_openai()
    assert wire[-1] == {"role": "assistant", "content": "晴"}
    assert_valid_conversation(wire)


@pytest.mark.parametrize(
    "source",
    [
        "def f(city: str, /) -> str: ...",
        # `_city`, `model_config`, `json` are legal since issue 14 (tests/test_tools.py)
        "def f(city: str):\n    yield city",
        "async def f(city: str):\n    yield city",
        "class Opaque: ...\ndef f(city: Opaque) -> str: ...",
    ],
)
def test_tools_that_could_never_be_called_are_refused_at_decoration(source):
    namespace: dict = {}
    exec(source, namespace)
    with pytest.raises(an.ToolDefinitionError):
        an.tool(namespace["f"])


@pytest.mark.parametrize(
    "setting,value",
    [
        ("tool_timeout", 0),
        ("tool_timeout", -1),
        ("tool_timeout", "5"),
        ("tool_timeout", float("nan")),
        ("max_iterations", 0),
        ("max_iterations", 2.5),
        ("repeat_limit", -1),
        ("token_budget", 0),
        ("final_answer_on_stop", "yes"),
        ("parallel_tool_calls", 1),
        ("model_params", ["temperature"]),
        ("model_params", {"messages": []}),
        ("stop_when", [42]),
        ("context_window", 0),
    ],
)
def test_agent_misconfiguration_is_a_configuration_error_naming_the_field(setting, value):
    with pytest.raises(an.ConfigurationError, match=setting):
        an.Agent("", **{setting: value})
    agent = an.Agent("")
    with pytest.raises(an.ConfigurationError, match=setting):
        setattr(agent, setting, value)


@pytest.mark.parametrize("when", ["check_stop", "persist"])
async def test_run_cancel_from_a_subscriber_late_in_the_run_returns_the_result(tools, when):
    session = an.Session()
    run = an.Agent("", tools, model=ScriptedModel(["done"])).start("x", session=session)
    session.subscribe(lambda e: run.cancel() if e.stage == when else None)
    result = await run.finish()
    assert result.stop_reason in ("final_answer", "cancelled")
    assert session.lock.holder is None and session.is_valid
    await asyncio.sleep(0)  # no stray cancellation arrives later either


def test_a_provider_error_body_is_a_readable_error():
    from agentnb.models.base import coerce_response

    body = {"error": {"message": "Invalid API key", "type": "invalid_request_error"}}
    with pytest.raises(an.ModelResponseError, match=r"invalid_request_error.*Invalid API key"):
        coerce_response(body)


async def test_nan_in_a_tool_result_is_standard_json():
    @an.tool
    def measure(city: str) -> dict:
        """Returns NaN and infinity."""
        return {"t": float("nan"), "nested": [float("inf"), 1.5]}

    model = ScriptedModel([calls(call("m", "measure", city="x")), "ok"])
    result = await an.Agent("", [measure], model=model).run("x")
    raw = result.session.to_openai()[2]["content"]
    assert json.loads(raw, parse_constant=lambda c: pytest.fail(c)) == {
        "t": None,
        "nested": [None, 1.5],
    }


def test_tool_token_counts_follow_a_changed_toolset(tools):
    agent = an.Agent("", tools[:2])
    before = agent.tools_tokens()

    @an.tool
    def search_weather(city: str, date: str, units: str, language: str, detail: str) -> dict:
        """A much longer description of the weather tool, with many more parameters to count."""
        return {}

    agent.tools.remove("search_weather")
    agent.tools.add(search_weather)  # same number of tools, different schemas
    assert agent.tools_tokens() > before


def test_hasattr_widgets_never_raises():
    assert isinstance(hasattr(an, "widgets"), bool)


async def test_a_models_stream_is_closed_at_once_when_the_run_is_cancelled():
    closed = asyncio.Event()
    gate = asyncio.Event()

    class Slow(an.models.Model):
        name, streaming = "slow", True

        async def stream(self, request):  # type: ignore[override]
            try:
                yield an.models.Delta(text="part")
                await gate.wait()
                yield an.models.Delta(text="never")
            finally:
                closed.set()

    run = an.Agent("", model=Slow()).start("x")
    task = asyncio.ensure_future(run.finish())
    while not any(isinstance(e, an.events.ModelDelta) for e in run.events):
        await asyncio.sleep(0)
    run.cancel()
    result = await task
    assert result.stop_reason == "cancelled" and closed.is_set()


async def test_a_models_stream_is_closed_at_once_when_the_loop_body_raises():
    closed = asyncio.Event()

    class Interrupt(BaseException):  # not an Exception: subscribers' errors do not catch it
        pass

    class Chatty(an.models.Model):
        name, streaming = "chatty", True

        async def stream(self, request):  # type: ignore[override]
            try:
                for word in ("a", "b", "c"):
                    yield an.models.Delta(text=word)
            finally:
                closed.set()

    session = an.Session()

    def interrupt(event: an.events.Event) -> None:
        if isinstance(event, an.events.ModelDelta):
            raise Interrupt()

    session.subscribe(interrupt)
    with pytest.raises(Interrupt):
        await an.Agent("", model=Chatty()).run("x", session=session)
    assert closed.is_set()  # closed by the runtime, not left to the garbage collector
    assert session.is_valid and session.lock.holder is None


async def test_a_lost_stepper_is_reachable_from_the_session(tools):
    session = an.Session()
    agent = an.Agent("", tools, model=ScriptedModel(["one", "two"]))
    run = agent.start("x", session=session)
    await run.step()  # then the cell is re-run and `run` is lost
    del run
    with pytest.raises(an.SessionBusy, match=r"session\.active_run"):
        await agent.run("y", session=session)
    session.active_run.cancel()  # the documented way out
    result = await agent.run("y", session=session)
    assert result.output == "one" and result.stop_reason == "final_answer"
    assert_valid_conversation(session.to_openai())


# -- 7. memory and traces stay linear ----------------------------------------------------------
async def test_requests_are_recorded_by_reference_not_copied():
    session = an.Session()
    agent = an.Agent("sys", model=FunctionModel(lambda r: "ok"))
    for _ in range(50):
        await agent.run("hi", session=session)
    requests = session.snapshots
    assert len(requests) == 50
    assert len({id(r.source) for r in requests}) == 1  # one shared transcript list
    assert all(r._cache is None for r in requests)  # no per-request copy kept
    assert [r.size for r in requests] == [2 + 2 * i for i in range(50)]
    assert requests[3].messages[-1] == {"role": "user", "content": "hi"}


async def test_a_long_runs_trace_grows_linearly(tools, tmp_path):
    def size(iterations: int) -> int:
        replies = [calls(call("c", "calculate_cost", items=[1.0]))] * iterations + ["done"]
        agent = an.Agent(
            "sys",
            tools,
            model=ScriptedModel(replies),
            max_iterations=iterations + 1,
            repeat_limit=0,
        )
        result = agent.run_sync("go")
        assert result.iterations == iterations + 1
        path = result.trace.save(tmp_path / f"{iterations}.jsonl")
        loaded = an.Trace.load(path)
        requests = [e for e in loaded if isinstance(e, an.events.RequestAssembled)]
        assert requests[-1].request == result.trace.of_type(an.events.RequestAssembled)[-1].request
        return path.stat().st_size

    small, large = await asyncio.to_thread(size, 100), await asyncio.to_thread(size, 400)
    assert large < 4.5 * small  # linear (a quadratic trace would be ~16x)
