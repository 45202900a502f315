"""The proxy's last splits (issue 40 item 5): reasoning a client can only re-send as text
(pydantic-ai's shapes for unsigned reasoning) keeps its conversation whole; Claude Code's
JSON ``metadata.user_id`` names its session; the list says which API; ``/responses/compact``
is recorded; proxied messages carry the app loop's real iteration."""

from __future__ import annotations

import httpx
import pytest

import agentnb as an
from agentnb.models import WIRES, wire_for
from agentnb.widgets import payload
from agentnb.widgets.proxy_view import _row

INSTRUCTIONS = "你是旅行助手。"


def thinking_model():
    """Answers 'answer N' with reasoning 'thinking N' (N: the user turns so far)."""

    def reply(request):
        n = sum(m.get("role") == "user" for m in request.messages)
        return {"role": "assistant", "content": f"answer {n}", "reasoning_content": f"thinking {n}"}

    return an.models.FunctionModel(reply)


def _responses(url, items):
    body = {"model": "m", "instructions": INSTRUCTIONS, "input": items}
    return httpx.post(f"{url}/responses", json=body, timeout=30).json()


def _anthropic(url, messages):
    body = {"model": "m", "max_tokens": 100, "system": INSTRUCTIONS, "messages": messages}
    return httpx.post(f"{url}/messages", json=body, timeout=30).json()


def _user(text):
    return {"role": "user", "content": text}


def test_pydantic_ai_think_text_on_the_responses_api_stays_two_sessions():
    with (
        an.observe.serve(thinking_model(), signed=False) as upstream,
        an.observe.proxy(upstream=upstream.base_url) as proxy,
    ):
        first = _responses(proxy.base_url, [_user("周五上海到北京？")])
        (reasoning, message) = first["output"]
        assert reasoning["type"] == "reasoning" and "encrypted_content" not in reasoning
        thought = reasoning["summary"][0]["text"]
        answer = message["content"][0]["text"]
        history = [  # pydantic-ai: unsigned reasoning as <think> text, then the answer
            _user("周五上海到北京？"),
            {"role": "assistant", "content": f"<think>\n{thought}\n</think>"},
            {"role": "assistant", "content": answer},
        ]
        _responses(proxy.base_url, [*history, _user("那周六呢？")])
        _responses(proxy.base_url, [*history, _user("那周日呢？")])  # the follow-up, edited
        sessions = proxy.sessions
        hows = [c.how for c in proxy.conversations]
    assert len(sessions) == 2 and hows == ["new", "branch"]
    assert [m.text for m in sessions[0].messages if m.role != "system"] == [
        "周五上海到北京？", "answer 1", "那周六呢？", "answer 2"
    ]  # fmt: skip


@pytest.mark.parametrize("where", ["before the answer", "after the answer"])
def test_pydantic_ai_assistant_thinking_on_anthropic_stays_two_sessions(where):
    with (
        an.observe.serve(thinking_model(), signed=False) as upstream,
        an.observe.proxy(upstream=upstream.base_url) as proxy,
    ):
        first = _anthropic(proxy.base_url, [_user("周五上海到北京？")])
        (thinking, text) = first["content"]
        assert thinking["type"] == "thinking" and thinking["signature"] == ""
        resent = _user(f"<assistant_thinking>{thinking['thinking']}</assistant_thinking>")
        answer = {"role": "assistant", "content": [text]}
        turn = [resent, answer] if where == "before the answer" else [answer, resent]
        history = [_user("周五上海到北京？"), *turn]
        _anthropic(proxy.base_url, [*history, _user("那周六呢？")])
        _anthropic(proxy.base_url, [*history, _user("那周日呢？")])
        sessions = proxy.sessions
        hows = [c.how for c in proxy.conversations]
    assert len(sessions) == 2 and hows == ["new", "branch"]
    texts = [m.text for m in sessions[0].messages if m.role != "system"]
    assert texts == ["周五上海到北京？", "answer 1", "那周六呢？", "answer 2"]


def test_a_user_message_of_thinking_text_is_folded_into_its_turn_never_dropped():
    read = WIRES["anthropic"].read_request(
        {
            "model": "m",
            "messages": [
                _user("hi"),
                {"role": "assistant", "content": "hello"},
                _user("<assistant_thinking>why</assistant_thinking>"),
                _user("<assistant_thinking>orphan</assistant_thinking>"),
            ],
        }
    )
    assert read.messages[1] == {
        "role": "assistant",
        "content": "hello",
        "reasoning_content": "why",
        "reasoning_resent_as": "user message",
    }
    assert read.messages[2]["content"] == "<assistant_thinking>orphan</assistant_thinking>"


def test_claude_codes_json_user_id_names_its_session():
    user_id = '{"device_id": "d1", "account_uuid": "a1", "session_id": "5f0c-4e1b-9a77-2d31"}'
    body = {"model": "m", "messages": [_user("hi")], "metadata": {"user_id": user_id}}
    assert WIRES["anthropic"].read_request(body).ids == ["5f0c-4e1b-9a77-2d31"]
    legacy = {**body, "metadata": {"user_id": "user_ab_account__session_5f0c-4e1b-9a77"}}
    assert WIRES["anthropic"].read_request(legacy).ids == ["5f0c-4e1b-9a77"]


def test_responses_compact_is_read_as_the_responses_api():
    assert wire_for("/v1/responses/compact") is WIRES["responses"]
    reply = WIRES["responses"].read_reply(
        {
            "id": "resp_c",
            "object": "response.compaction",
            "output": [
                {
                    "type": "message",
                    "role": "user",
                    "content": [{"type": "input_text", "text": "q"}],
                },
                {"type": "compaction", "id": "cmp_1", "encrypted_content": "opaque"},
            ],
        }
    )
    assert {"type": "compaction", "id": "cmp_1", "encrypted_content": "opaque"} in reply.message[
        "items"
    ]  # kept whole, never dropped


async def test_the_list_names_the_api_and_messages_carry_the_real_iteration():
    with (
        an.observe.serve() as upstream,
        an.observe.proxy(upstream=upstream.base_url) as proxy,
    ):
        model = an.models.ResponsesModel("travel", base_url=proxy.base_url)
        result = await an.travel.travel_agent(model=model).run("周五上海到北京，帮我看看天气和机票")
        assert result.stop_reason == "final_answer"
        (conversation,) = proxy.conversations
    assert _row(conversation)["api"] == "responses"
    session = conversation.session
    wires = session.wire()
    its = payload.iterations(len(wires), wires, session.runs)
    replies = [it for it, w in zip(its, wires, strict=True) if w["role"] == "assistant"]
    assert len(replies) >= 3 and replies == list(range(1, len(replies) + 1))
