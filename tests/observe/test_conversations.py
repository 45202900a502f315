"""Threading by what the client says first (issue 30): native ids, previous_response_id, a
system prompt that changes every call, compaction, the unthreadable - and each proxied call a
run of its session, recorded through the session's own API (issue 23)."""

from __future__ import annotations

import asyncio
import threading
import time

import httpx
import openai
import pytest

import agentnb as an
from agentnb.errors import SessionBusy
from agentnb.observe.conversations import Conversations
from tests.helpers import eventually_sync
from tests.observe.apps import TRAVEL
from tests.observe.observe_helpers import KEY, canonical
from tests.servers.fault_server import Step, reply


def user(text):
    return {"role": "user", "content": text}


def assistant(text):
    return {"role": "assistant", "content": text}


@pytest.fixture(scope="module")
def standin():
    with an.observe.serve() as server:
        yield server


def _chat(proxy, messages, **options):
    with openai.OpenAI(base_url=proxy.base_url, api_key=KEY, max_retries=0, **options) as app:
        return app.chat.completions.create(model="m", messages=messages)


def test_a_tool_loop_whose_system_prompt_carries_the_time_is_one_session(standin):
    """Was one session per call, the earlier ones 'invalid' (their calls had no results)."""
    with an.observe.proxy(upstream=standin.base_url) as proxy:
        app = openai.OpenAI(base_url=proxy.base_url, api_key=KEY, max_retries=0)
        question = "I fly from Shanghai to Beijing on Friday: find me a flight and the weather."
        messages = [{"role": "system", "content": ""}, user(question)]
        for step in range(6):
            now = f"{TRAVEL.instructions}\nThe time is 2026-12-02 10:{step:02d}:00."
            messages[0] = {"role": "system", "content": now}
            answer = app.chat.completions.create(
                model="travel", messages=messages, tools=TRAVEL.tools.schemas()
            )
            message = answer.choices[0].message.model_dump(exclude_none=True)
            messages.append(message)
            if not message.get("tool_calls"):
                break
            for call in message["tool_calls"]:
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": "{}"})
        app.close()
        (session,) = proxy.sessions
        calls = len(proxy.calls)
    assert calls >= 2 and session.is_valid, session.problems
    assert canonical(session.to_openai()) == canonical(messages)  # the latest prompt, in place
    edits = [e for e in session.edits if e.index == 0]
    assert len(edits) == calls - 1  # each change recorded as an edit of message 0
    assert all("10:0" in e.before["content"] for e in edits)


def test_client_native_ids_name_the_session_and_keep_look_alikes_apart(echo_server):
    with an.observe.proxy(upstream=echo_server.base_url) as proxy:
        for header, value in [
            ("x-claude-code-session-id", "9d3c2f1a-claude"),
            ("x-opencode-session", "ses_opencode1"),
            ("session_id", "codex-7"),
            ("x-session-affinity", "aff-1"),
        ]:
            _chat(proxy, [user("hi")], default_headers={header: value})
        cached = {"prompt_cache_key": "my-app"}
        with openai.OpenAI(base_url=proxy.base_url, api_key=KEY, max_retries=0) as app:
            app.chat.completions.create(model="m", messages=[user("one")], extra_body=cached)
            app.chat.completions.create(model="m", messages=[user("two")], extra_body=cached)
        ids = [s.id for s in proxy.sessions]
        hows = [c.how for c in proxy.conversations]
    assert ids[:4] == ["9d3c2f1a-claude", "ses_opencode1", "codex-7", "aff-1"]
    # a cache key groups an app's conversations but is no session: two apart, neither compacted
    assert ids[4:] == ["my-app", "my-app.b2"] and hows == ["new"] * 6


def test_a_compaction_links_to_the_conversation_it_compacted(echo_server):
    """Under the client's session id, or carrying later turns without the earlier ones."""
    with an.observe.proxy(upstream=echo_server.base_url) as proxy:
        long = [user("plan a trip"), assistant("echo plan a trip @1"), user("to Beijing")]
        _chat(proxy, long, default_headers={"x-claude-code-session-id": "cc-1"})
        summary = [
            {"role": "system", "content": "Summary: a trip to Beijing is planned."},
            user("and the weather?"),
        ]
        _chat(proxy, summary, default_headers={"x-claude-code-session-id": "cc-1"})
        # no id: the compacted request keeps the last turns, not the first
        first = [user("a"), assistant("echo a @1"), user("b"), assistant("echo b @3"), user("c")]
        _chat(proxy, first)
        _chat(
            proxy,
            [
                user("Summary of a and b."),
                assistant("echo b @3"),
                user("c"),
                assistant("echo c @5"),
                user("d"),
            ],
        )
        c = proxy.conversations
    assert [x.how for x in c] == ["new", "compaction", "new", "compaction"]
    assert c[1].parent == c[0].session.id == "cc-1" and c[1].session.id == "cc-1.b2"
    assert c[3].parent == c[2].session.id and "later turns" in c[3].note
    assert c[1].session.forked_from is None  # a link, not a fork: it holds its own messages


def test_a_conversation_the_proxy_cannot_thread_is_labelled_unthreaded(echo_server, standin):
    with an.observe.proxy(upstream=echo_server.base_url) as proxy:
        started = [
            user("q"),
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "c9", "type": "function", "function": {"name": "f", "arguments": "{}"}}
                ],
            },
            {"role": "tool", "tool_call_id": "c9", "content": "1"},
        ]
        _chat(proxy, started[1:])  # it starts mid-way: a reply, then a result
        (c,) = proxy.conversations
    assert c.how == "unthreaded" and "before the proxy" in c.note
    with (
        an.observe.proxy(upstream=standin.base_url) as proxy,
        openai.OpenAI(base_url=proxy.base_url, api_key=KEY, max_retries=0) as app,
    ):
        direct = openai.OpenAI(base_url=standin.base_url, api_key="x")
        earlier = direct.responses.create(model="m", input="hello")  # not through the proxy
        app.responses.create(model="m", input="and then?", previous_response_id=earlier.id)
        (c,) = proxy.conversations
        direct.close()
    assert c.how == "unthreaded" and earlier.id in c.note


def test_previous_response_id_threads_exactly_and_branches_from_an_earlier_reply(standin):
    with (
        an.observe.proxy(upstream=standin.base_url) as proxy,
        openai.OpenAI(base_url=proxy.base_url, api_key=KEY, max_retries=0) as app,
    ):
        one = app.responses.create(model="m", instructions="Be brief.", input="hello")
        two = app.responses.create(
            model="m", instructions="Be brief.", input="more", previous_response_id=one.id
        )
        app.responses.create(
            model="m", instructions="Be brief.", input="again", previous_response_id=two.id
        )
        # back to the first reply: a branch of the conversation at that point
        app.responses.create(
            model="m", instructions="Be brief.", input="instead", previous_response_id=one.id
        )
        # store: false leaves nothing to continue from: the upstream refuses, the proxy says so
        gone = app.responses.create(model="m", input="private", store=False)
        with pytest.raises(openai.BadRequestError):
            app.responses.create(model="m", input="next", previous_response_id=gone.id)
        c = proxy.conversations
    main, branch = c[0].session, c[1].session
    texts = [m["content"] for m in main.to_openai() if m["role"] in ("system", "user")]
    assert texts == ["Be brief.", "hello", "more", "again"] and main.is_valid
    assert c[1].how == "branch" and c[1].parent == main.id
    assert [m["content"] for m in branch.to_openai() if m["role"] == "user"] == ["hello", "instead"]
    assert [x.how for x in c[2:]] == ["new", "unthreaded"]


def test_each_proxied_call_is_a_run_that_holds_its_session_while_in_flight(fault_server):
    fault_server.script(Step(delay=0.6, body=_completion("late")), reply("second"))
    with an.observe.proxy(upstream=fault_server.base_url) as proxy:
        seen = {}

        def watch():
            eventually_sync(lambda: proxy.sessions and proxy.sessions[0].active_run is not None)
            session = proxy.sessions[0]
            seen["run"] = session.active_run
            try:
                session.append(user("by hand, mid-call"))
            except SessionBusy as exc:
                seen["refused"] = str(exc)

        watcher = threading.Thread(target=watch)
        watcher.start()
        _chat(proxy, [user("hi")])
        watcher.join()
        _chat(proxy, [user("hi"), assistant("late"), user("again")])
        (session,) = proxy.sessions
        calls = proxy.calls
    assert seen["run"] is calls[0] and "refused" in seen  # the view sees it running
    assert session.active_run is None  # released at the end
    assert [r.run_id for r in session.runs] == [c.id for c in calls]
    first, second = session.runs
    assert (first.start, first.end, first.stop_reason) == (0, 2, "final_answer")
    assert (second.start, second.end, first.output) == (2, 4, "late")
    assert first.usage.total_tokens == 14 and not first.usage.estimated


def _completion(text):
    from tests.servers.fault_server import completion

    return completion({"role": "assistant", "content": text})


def test_a_session_held_by_a_run_of_yours_gets_the_apps_call_in_a_branch(echo_server):
    with an.observe.proxy(upstream=echo_server.base_url) as proxy:
        _chat(proxy, [user("hi")])
        (session,) = proxy.sessions
        run = an.Agent("t", [], model=an.models.FunctionModel(lambda r: "x", name="x")).start(
            "by hand", session=session
        )
        asyncio.run(run.step())  # holds the session, paused between steps
        assert session.active_run is not None
        _chat(proxy, [user("hi"), assistant("echo hi @1"), user("next")])
        c = proxy.conversations
    assert [x.how for x in c] == ["new", "branch"] and "held by run" in c[1].note
    assert [m["content"] for m in c[1].session.to_openai()][-1] == "echo next @3"


def test_placing_a_request_is_one_lookup_per_message_at_5000_conversations():
    """Issue 27 M2: placing scanned every conversation (5-15 ms at 5,000, quadratic)."""
    conversations = Conversations()
    for i in range(5000):
        placed = conversations.place([user(f"conversation {i}")])
        c = placed.conversation
        new = [user(f"conversation {i}"), assistant(f"answer {i}")]
        conversations.grow(c, new)
    request = [user("conversation 4321"), assistant("answer 4321"), user("go on")]
    started = time.perf_counter()
    for _ in range(100):
        placed = conversations.place(request)
    per = (time.perf_counter() - started) / 100
    assert placed.conversation is conversations.conversations[4321] and placed.start == 2
    assert per < 0.001, f"{per * 1000:.2f} ms per placement"


def test_a_resent_body_shares_what_it_repeats(echo_server):
    """Issue 27 M3: every call kept its whole body (a 0.8 MB, 400-turn conversation +205 MB)."""
    with an.observe.proxy(upstream=echo_server.base_url) as proxy:
        messages = [user("x" * 2000)]
        with httpx.Client(base_url=proxy.base_url, timeout=30) as client:
            for turn in range(40):
                answer = client.post("/chat/completions", json={"model": "m", "messages": messages})
                messages += [answer.json()["choices"][0]["message"], user(f"{turn} " + "y" * 2000)]
        calls = proxy.calls
    first, last = calls[0].body["messages"], calls[-1].body["messages"]
    assert last[0] is first[0]  # one object for the message every call re-sent
    distinct = {id(m) for c in calls for m in c.body["messages"]}
    assert len(distinct) == len(last)  # each message kept once, whatever the number of calls


def test_an_edited_anthropic_turn_is_a_branch_and_tool_results_pair(standin):
    import anthropic

    tools = [
        {
            "name": "search_weather",
            "description": "Weather for a city on a date",
            "input_schema": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "date": {"type": "string"}},
            },
        }
    ]
    with an.observe.proxy(upstream=standin.base_url) as proxy:
        client = anthropic.Anthropic(base_url=proxy.url, api_key=KEY, max_retries=0)
        asked = [{"role": "user", "content": "北京周五天气？"}]
        first = client.messages.create(model="m", max_tokens=256, messages=asked, tools=tools)
        calls = [b for b in first.content if b.type == "tool_use"]
        assert calls and first.stop_reason == "tool_use"
        turn = [
            *asked,
            {
                "role": "assistant",
                "content": [b.model_dump(exclude_none=True) for b in first.content],
            },
        ]
        results = [
            {"type": "tool_result", "tool_use_id": c.id, "content": '{"sky": "晴"}'} for c in calls
        ]
        client.messages.create(
            model="m",
            max_tokens=256,
            tools=tools,
            messages=[*turn, {"role": "user", "content": results}],
        )
        edited = [
            {"type": "tool_result", "tool_use_id": c.id, "content": '{"sky": "雨"}'} for c in calls
        ]
        client.messages.create(
            model="m",
            max_tokens=256,
            tools=tools,
            messages=[*turn, {"role": "user", "content": edited}],
        )
        client.close()
        c = proxy.conversations
    assert [x.how for x in c] == ["new", "branch"] and c[1].parent == c[0].session.id
    for x in c:  # paired; at most the last reply's own calls wait (the app stopped there)
        assert all(p.kind == "open" for p in x.session.problems), x.session.problems
        tool = [m for m in x.session.to_openai() if m["role"] == "tool"]
        assert [m["tool_call_id"] for m in tool] == [call.id for call in calls]
    assert '"晴"' in c[0].session.to_openai()[2]["content"]
    assert '"雨"' in c[1].session.to_openai()[2]["content"]


def test_requests_adding_to_an_upstream_conversation_are_one_session(standin):
    """The Responses API's `conversation`: each request carries only the new items."""
    with (
        an.observe.proxy(upstream=standin.base_url) as proxy,
        openai.OpenAI(base_url=proxy.base_url, api_key=KEY, max_retries=0) as app,
    ):
        for text in ("hello", "more", "again"):
            app.responses.create(model="m", input=text, conversation="conv_abc")
        (c,) = proxy.conversations
    users = [m["content"] for m in c.session.to_openai() if m["role"] == "user"]
    assert users == ["hello", "more", "again"] and c.session.id == "conv_abc"
    assert "may hold items" in c.note and len(c.session.runs) == 3
