"""Conversation threading: the rule on its own, then 20 interleaved conversations through the proxy."""

from __future__ import annotations

import asyncio
import json
import random
from collections import Counter

import openai
import pytest

import agentnb as an
from agentnb.observe.conversations import Conversations
from agentnb.observe.conversations import canonical as key
from tests.observe.observe_helpers import KEY, canonical

SYSTEM = {"role": "system", "content": "You are terse."}


def user(text):
    return {"role": "user", "content": text}


def grow(conversations, messages, reply, explicit=None):
    """Place a request and append what the recorder would: the new messages and the reply."""
    placed = conversations.place(messages, explicit)
    c = placed.conversation
    for index, message in placed.edits:
        c.session.replace(index, message)
        conversations.edited(c, index, message)
    added = [*messages[placed.start :], reply]
    for m in added:
        c.session.append(m)
    conversations.grow(c, added)
    return placed


def test_the_same_turn_resent_in_another_shape_continues_its_conversation():
    reply = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "f", "arguments": '{"a": 1, "b": 2}'},
            }
        ],
    }
    resent = {
        "role": "assistant",
        "content": "",
        "refusal": None,
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "f", "arguments": '{"b":2,"a":1}'},
            }
        ],
    }
    assert key(reply) == key(resent)
    assert key(user("hi")) == key({"role": "user", "content": [{"type": "text", "text": "hi"}]})
    assert key(user("hi")) != key(user("hi "))
    conversations = Conversations()
    first = grow(conversations, [SYSTEM, user("hi")], reply)
    tool = {"role": "tool", "tool_call_id": "c1", "content": "3"}
    second = grow(
        conversations, [SYSTEM, user("hi"), resent, tool], {"role": "assistant", "content": "3"}
    )
    assert second.conversation is first.conversation and second.start == 3
    assert len(conversations.conversations) == 1 and first.conversation.session.is_valid


def test_an_edited_turn_is_a_branch_and_a_shared_system_prompt_is_not():
    conversations = Conversations()
    a1 = {"role": "assistant", "content": "a1"}
    root = grow(conversations, [SYSTEM, user("u1")], a1).conversation
    grow(
        conversations, [SYSTEM, user("u1"), a1, user("u2")], {"role": "assistant", "content": "a2"}
    )
    edited = grow(
        conversations,
        [SYSTEM, user("u1"), a1, user("u2 edited")],
        {"role": "assistant", "content": "a2'"},
    )
    assert edited.conversation.parent == root.session.id and edited.start == 3
    assert edited.conversation.how == "branch"
    branch = edited.conversation.session
    assert branch.forked_from == root.session.id
    assert [m["content"] for m in branch.to_openai()] == [
        SYSTEM["content"],
        "u1",
        "a1",
        "u2 edited",
        "a2'",
    ]
    assert len(root.session) == 5  # the original is untouched: never a merge
    other = grow(
        conversations, [SYSTEM, user("something else")], {"role": "assistant", "content": "x"}
    )
    assert other.conversation.how == "new" and other.conversation.session.forked_from is None
    assert len(conversations.conversations) == 3


def test_a_waiting_conversation_is_not_continued_and_a_retry_after_an_error_is():
    conversations = Conversations()
    first = conversations.place([user("same start")])
    c = first.conversation
    c.session.append(user("same start"))
    conversations.grow(c, [user("same start")])
    c.busy = True  # its reply has not come back yet
    twin = conversations.place([user("same start")])
    assert twin.conversation is not c and twin.conversation.parent == c.session.id
    assert twin.start == 1  # it carries the shared opening, adds nothing
    c.busy, c.unanswered = False, True  # the call failed
    retry = conversations.place([user("same start")])
    assert retry.conversation is c and retry.start == 1
    c.unanswered = False
    regenerate = conversations.place([user("same start")])
    assert regenerate.conversation not in (c, twin.conversation)


def test_an_explicit_id_keeps_conversations_apart_that_look_the_same():
    conversations = Conversations()
    hi = [user("hi")]
    a = grow(conversations, hi, {"role": "assistant", "content": "hello"}, explicit="chat/A 1")
    b = grow(conversations, hi, {"role": "assistant", "content": "hello"}, explicit="chat-B")
    assert a.conversation.session.id == "chat-A-1" and b.conversation.session.id == "chat-B"
    assert a.conversation.parent is None and b.conversation.parent is None
    again = grow(
        conversations,
        [*hi, {"role": "assistant", "content": "hello"}, user("x")],
        {"role": "assistant", "content": "y"},
        explicit="chat-B",
    )
    assert again.conversation is b.conversation


# -- 20 interleaved conversations through the proxy -------------------------------------------
def _scripts(rng):
    """20 conversations: (name, turns, parent, edit_at). Some share openings word for word."""
    scripts = []
    for i in range(14):
        opening = "hello" if i < 6 else f"start {i}"  # 0-5 open identically
        turns = [opening, f"tool:city{i}" if i % 3 == 0 else f"second {i}", f"third {i}"]
        if i in (1, 2):  # identical first two turns, then apart
            turns[1] = "second shared"
        scripts.append((f"c{i}", turns, None, None))
    for j, parent in enumerate((6, 7, 8, 9, 12, 13)):  # six branches, an earlier turn edited
        edit_at = 1 + j % 2
        base = scripts[parent][1]
        turns = [*base[:edit_at], f"edited {j}", f"after edit {j}"]
        scripts.append((f"b{j}", turns, f"c{parent}", edit_at))
    rng.shuffle(scripts)
    return scripts


async def _conversation(app, turns, rng, messages, done_turn, wait_for=None):
    if wait_for is not None:
        await wait_for.wait()
    for n, text in enumerate(turns):
        if n < sum(m["role"] == "user" for m in messages):
            continue  # a branch starts from its parent's messages
        await asyncio.sleep(rng.random() * 0.02)
        messages.append(user(text))
        while True:
            reply = await _ask(app, messages, rng)
            messages.append(reply)
            if not reply.get("tool_calls"):
                break
            call = reply["tool_calls"][0]
            messages.append(
                {
                    "role": "tool",
                    "tool_call_id": call["id"],
                    "content": json.dumps({"data": call["function"]["arguments"]}),
                }
            )
        done_turn[n].set()


async def _ask(app, messages, rng):
    if rng.random() < 0.5:
        stream = await app.chat.completions.create(model="echo", messages=messages, stream=True)
        text, calls = "", {}
        async for chunk in stream:
            delta = chunk.choices[0].delta
            text += delta.content or ""
            for c in delta.tool_calls or ():
                slot = calls.setdefault(
                    c.index,
                    {"id": c.id, "type": "function", "function": {"name": "", "arguments": ""}},
                )
                slot["function"]["name"] = c.function.name or slot["function"]["name"]
                slot["function"]["arguments"] += c.function.arguments or ""
        if calls:
            return {
                "role": "assistant",
                "content": text or None,
                "tool_calls": list(calls.values()),
            }
        return {"role": "assistant", "content": text}
    answer = await app.chat.completions.create(model="echo", messages=messages)
    return answer.choices[0].message.model_dump(exclude_none=True)


async def _run_all(base_url, seed):
    rng = random.Random(seed)
    scripts = _scripts(rng)
    app = openai.AsyncOpenAI(base_url=base_url, api_key=KEY, max_retries=0)
    convs = {name: [SYSTEM] for name, *_ in scripts}
    done = {name: [asyncio.Event() for _ in turns] for name, turns, *_ in scripts}
    tasks = []
    for name, turns, parent, edit_at in scripts:
        if parent is None:
            tasks.append(
                _conversation(app, turns, random.Random(rng.random()), convs[name], done[name])
            )
        else:
            tasks.append(_branch(app, name, turns, parent, edit_at, convs, done, rng.random()))
    await asyncio.gather(*tasks)
    await app.close()
    return scripts, convs


async def _branch(app, name, turns, parent, edit_at, convs, done, seed):
    await done[parent][edit_at].wait()  # the original turn was sent and answered: now edit it
    mine = convs[name]
    source = convs[parent]
    users = 0
    for m in source[1:]:  # the parent's messages before its user turn number `edit_at`
        if m["role"] == "user":
            if users == edit_at:
                break
            users += 1
        mine.append(m)
    await _conversation(app, turns, random.Random(seed), mine, done[name])


@pytest.mark.parametrize("seed", [19, 2026, 7])
def test_twenty_interleaved_conversations_are_reconstructed_exactly(echo_server, seed):
    with an.observe.proxy(upstream=echo_server.base_url) as proxy:
        scripts, convs = asyncio.run(_run_all(proxy.base_url, seed=seed))
        sessions = proxy.sessions
        assert len(sessions) == 20, [(s.id, len(s), s.forked_from) for s in sessions]
        got = Counter(json.dumps(canonical(s.to_openai())) for s in sessions)
        want = Counter(json.dumps(canonical(m)) for m in convs.values())
        assert got == want  # every conversation exactly once, message for message
        by_content = {json.dumps(canonical(s.to_openai())): s for s in sessions}
        for name, _turns, parent, _edit in scripts:
            if parent is None:
                continue
            branch = by_content[json.dumps(canonical(convs[name]))]
            origin = by_content[json.dumps(canonical(convs[parent]))]
            assert branch.forked_from == origin.id, (name, parent)
        assert all(s.is_valid for s in sessions)  # every tool call paired with its result
        assert len(proxy.calls) == len(echo_server.requests) > 50
        assert sum(c.stream for c in proxy.calls) > 10  # streamed and whole calls interleaved
