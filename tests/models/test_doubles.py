"""ScriptedModel, FunctionModel and the model protocol's pieces."""

from __future__ import annotations

import asyncio

import pytest

import agentnb as an
from agentnb.models import Delta, FunctionModel, ModelRequest, ReplyAssembler, ScriptedModel, Usage
from agentnb.models.base import coerce_response

REQ = ModelRequest([{"role": "user", "content": "周五北京天气？"}])


async def test_scripted_model_fails_loudly_past_its_script():
    model = ScriptedModel(["一", "二"])
    assert (await model.complete(REQ)).message.text == "一"
    await model.complete(REQ)
    with pytest.raises(an.UnexpectedModelCall) as info:
        await model.complete(REQ)
    message = str(info.value)
    assert "ran out of replies: it has 2, and this is call #3" in message
    assert "'user' message: '周五北京天气？'" in message and "Add a reply" in message


async def test_assert_complete_names_what_was_left():
    model = ScriptedModel(["a", "b", "c"])
    await model.complete(REQ)
    with pytest.raises(an.ScriptNotConsumed, match="2 of 3 replies were never requested"):
        model.assert_complete()
    assert model.remaining == 2 and model.requests == [REQ]


def test_script_is_validated_when_built():
    with pytest.raises(an.ModelResponseError, match="must be an assistant message"):
        ScriptedModel([{"role": "user", "content": "x"}])
    with pytest.raises(an.ModelResponseError, match="cannot use a int"):
        ScriptedModel([42])
    with pytest.raises(an.ModelResponseError, match="tool_calls"):
        ScriptedModel([{"role": "assistant", "tool_calls": [{"id": "a"}]}])


async def test_scripted_exceptions_are_raised_at_their_turn():
    model = ScriptedModel(["ok", TimeoutError("slow upstream")])
    await model.complete(REQ)
    with pytest.raises(TimeoutError, match="slow upstream"):
        await model.complete(REQ)


async def test_function_model_sync_async_and_request_access():
    seen = []

    def sync(request):
        seen.append(request.messages[-1]["content"])
        return "sync"

    async def asynchronous(request):
        await asyncio.sleep(0)
        return {"role": "assistant", "content": "async"}

    assert (await FunctionModel(sync).complete(REQ)).message.text == "sync"
    assert seen == ["周五北京天气？"]
    model = FunctionModel(asynchronous, name="mine")
    assert (await model.complete(REQ)).message.text == "async" and model.name == "mine"


async def test_streaming_splits_and_reassembles_exactly():
    reply = {
        "role": "assistant",
        "content": "查一下",
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {
                    "name": "search_weather",
                    "arguments": '{"city": "北京", "date": "周五"}',
                },
            }
        ],
    }
    model = ScriptedModel([reply], stream=True, chunk_size=3)
    assembler = ReplyAssembler()
    deltas = [d async for d in model.stream(REQ)]
    assert len(deltas) > 5
    for d in deltas:
        assembler.add(d)
    assert assembler.result().message.to_openai() == reply


def test_assembler_sets_repeated_names_and_appends_arguments():
    # llama.cpp streams repeat the id and the full name in every chunk (FACTS.md).
    a = ReplyAssembler()
    for piece in ['{"city"', ': "北京"', "}"]:
        a.add(Delta(tool_index=0, tool_id="call__0_w", tool_name="search_weather", arguments=piece))
    a.add(Delta(finish_reason="tool_calls", usage=Usage(10, 5, 15)))
    result = a.result("m")
    call = result.message.tool_calls[0]
    assert (call.id, call.function.name, call.function.arguments) == (
        "call__0_w",
        "search_weather",
        '{"city": "北京"}',
    )
    assert result.message.content is None and "tool_calls" in result.message.to_openai()
    assert result.finish_reason == "tool_calls" and result.usage.total_tokens == 15


def test_coerce_a_whole_completion_and_an_error_body():
    completion = {
        "id": "x",
        "model": "smollm2",
        "choices": [
            {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "晴"}}
        ],
        "usage": {"prompt_tokens": 7, "completion_tokens": 1, "total_tokens": 8},
    }
    response = coerce_response(completion)
    assert response.message.text == "晴" and response.usage == Usage(7, 1, 8)
    assert response.model == "smollm2" and response.raw is completion
    with pytest.raises(an.ModelResponseError, match="is this an error body"):
        coerce_response({"choices": [], "error": {"message": "boom"}})


def test_request_body_and_usage_sum():
    req = ModelRequest(
        [{"role": "user", "content": "x"}], [{"type": "function"}], {"temperature": 0}
    )
    body = req.to_openai()
    assert body == {
        "messages": [{"role": "user", "content": "x"}],
        "tools": [{"type": "function"}],
        "temperature": 0,
    }
    body["messages"][0]["content"] = "changed"
    assert req.messages[0]["content"] == "x"  # a copy
    assert Usage(1, 2, 3) + Usage(1, 1, 2, True) == Usage(2, 3, 5, True)


def test_a_function_model_keeps_its_latest_requests_not_every_session_it_served():
    # A request holds its session's messages by reference: a model that kept every request
    # of a long sweep kept every session's messages alive (and slowed every collection).
    import gc

    model = FunctionModel(lambda request: "好的", keep_requests=3)
    agent = an.Agent("你是差旅助手。", model=model)

    def objects_after(runs: int) -> int:
        for i in range(runs):
            agent.run_sync(f"第 {i} 次", session=an.Session())
        gc.collect()
        return len(gc.get_objects())

    objects_after(20)
    baseline = objects_after(20)
    grown = objects_after(200) - baseline
    assert grown < 100, grown  # keeping every request: about 640 more
    assert [r.messages[-1]["content"] for r in model.requests] == ["第 197 次", "第 198 次",
                                                                   "第 199 次"]  # fmt: skip
    everything = FunctionModel(lambda request: "好的", keep_requests=None)
    for i in range(150):
        an.Agent("", model=everything).run_sync(str(i))
    assert len(everything.requests) == 150 and len(FunctionModel(str).requests) == 0


async def test_a_function_model_gets_the_run_s_seed_by_a_seed_parameter():
    """Issue 36: a FunctionModel got an evaluation's per-run seed only through an undocumented
    with_seed. A function with a ``seed`` parameter now receives it: the seed of each (task,
    repeat), the same for every variant; outside an evaluation the one given (None)."""
    import random

    import agentnb as an
    from agentnb.evals import derive_seed

    def sampled(request, seed):
        return f"seed={seed} draw={random.Random(seed).random():.6f}"

    model = FunctionModel(sampled)
    plain = FunctionModel(lambda request: "no seed asked")
    tasks = an.TaskSet([an.Task("t1", "one"), an.Task("t2", "two")])
    variants = {
        "a": an.Agent("x", model=model),
        "b": an.Agent("y", model=model),
        "plain": an.Agent("z", model=plain),
    }
    ev = await an.evaluate(variants, tasks, repeats=2, seed=5, progress=False)
    for r in ev.records:
        if r.variant == "plain":
            assert r.output == "no seed asked"
            continue
        seed = derive_seed(5, r.task, r.repeat)
        assert r.seed == seed and r.output.startswith(f"seed={seed} ")
    pairs = {(r.task, r.repeat): r.output for r in ev.records if r.variant == "a"}
    assert all(pairs[(r.task, r.repeat)] == r.output for r in ev.records if r.variant == "b")
    assert len(model.requests) == 8, "the reseeded copies' requests are the model's"
    once = await an.Agent("x", model=FunctionModel(sampled, seed=7)).run("hi")
    assert once.output.startswith("seed=7 ")
    assert (await an.Agent("x", model=model).run("hi")).output.startswith("seed=None ")
    assert model.with_seed(3).seed == 3 and model.seed is None
