from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import agentnb as an
from agentnb.messages import parse_message

EXAMPLES = [
    {"role": "system", "content": "你是差旅助手。"},
    {"role": "developer", "content": "be brief"},
    {"role": "user", "content": "周五上海到北京"},
    {"role": "user", "content": [{"type": "text", "text": "看图"}], "name": "alice"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_abc123",
                "type": "function",
                "function": {
                    "name": "get_weather",
                    "arguments": '{"city": "北京", "date": "2023-10-27"}',
                },
            }
        ],
    },
    {"role": "assistant", "content": "", "tool_calls": []},
    {"role": "assistant", "content": "答案", "reasoning_content": "先查天气"},
    {"role": "tool", "tool_call_id": "call_abc123", "name": "get_weather", "content": "晴"},
    {"role": "tool", "tool_call_id": "x", "content": "{}", "vendor_field": {"kept": True}},
]


@pytest.mark.parametrize("wire", EXAMPLES)
def test_round_trip_is_lossless(wire):
    message = parse_message(wire)
    assert message.to_openai() == wire
    assert parse_message(message.to_openai()) == message


json_text = st.text(max_size=30)


@given(
    st.fixed_dictionaries(
        {"role": st.just("assistant"), "content": st.none() | json_text},
        optional={
            "tool_calls": st.lists(
                st.fixed_dictionaries(
                    {
                        "id": json_text,
                        "type": st.just("function"),
                        "function": st.fixed_dictionaries(
                            {"name": json_text, "arguments": json_text}
                        ),
                    }
                ),
                max_size=3,
            ),
            "name": json_text,
        },
    )
)
def test_round_trip_property(wire):
    assert parse_message(wire).to_openai() == wire


def test_to_openai_returns_a_copy_the_cache_stays_intact():
    message = parse_message(EXAMPLES[4])
    out = message.to_openai()
    out["tool_calls"][0]["id"] = "changed"
    assert message.to_openai() == EXAMPLES[4]


def test_invalid_messages_say_what_is_wrong():
    with pytest.raises(an.InvalidMessage, match="role 'robot'"):
        parse_message({"role": "robot", "content": "x"})
    with pytest.raises(an.InvalidMessage, match="tool_call_id: Field required"):
        parse_message({"role": "tool", "content": "x"})
    with pytest.raises(an.InvalidMessage, match="must be a dict"):
        parse_message("hello")  # type: ignore[arg-type]
    with pytest.raises(an.InvalidMessage, match=r"tool_calls\.0\.function"):
        parse_message({"role": "assistant", "tool_calls": [{"id": "a", "type": "function"}]})


def test_arguments_given_as_an_object_are_normalised_to_a_json_string():
    m = parse_message(
        {
            "role": "assistant",
            "tool_calls": [
                {
                    "id": "a",
                    "type": "function",
                    "function": {"name": "f", "arguments": {"城市": "北京"}},
                }
            ],
        }
    )
    assert m.tool_calls[0].arguments == '{"城市": "北京"}'


def test_messages_are_frozen_and_copies_refresh_their_cache():
    m = an.UserMessage("周五")
    with pytest.raises(Exception, match="frozen"):
        m.content = "周六"  # type: ignore[misc]
    m.wire()
    changed = m.model_copy(update={"content": "周六"})
    assert changed.wire() == {"role": "user", "content": "周六"}
    assert changed.tokens != 0


def test_positional_content_and_reprs():
    assert an.UserMessage("hi").to_openai() == {"role": "user", "content": "hi"}
    call = an.ToolCall.make("c1", "search_weather", {"city": "北京"})
    msg = an.AssistantMessage(tool_calls=[call])
    assert repr(msg) == 'AssistantMessage(tool_calls=[search_weather({"city": "北京"}) #c1])'
    assert repr(an.ToolMessage("晴", tool_call_id="c1", name="w")) == (
        "ToolMessage('晴', tool_call_id='c1', name='w')"
    )


def test_html_escapes_model_output():
    evil = parse_message({"role": "assistant", "content": "<script>alert(1)</script><b>x</b>"})
    bundle = evil._repr_mimebundle_()
    assert "<script>" not in bundle["text/html"]
    assert "&lt;script&gt;" in bundle["text/html"]
    assert bundle["text/plain"].startswith("AssistantMessage(")


def test_tool_message_ok_reads_the_structured_error():
    assert an.ToolMessage('{"ok": false, "error": "x"}', tool_call_id="a").ok is False
    assert an.ToolMessage('{"flights": []}', tool_call_id="a").ok is True
    assert an.ToolMessage("plain", tool_call_id="a").ok is True


def test_token_estimate_follows_the_articles_rule_of_thumb():
    from agentnb.tokens import estimate_tokens

    assert estimate_tokens("abcdefgh") == 2  # ~4 chars per token in English
    assert estimate_tokens("北京天气") == 2  # ~2 chars per token in Chinese
    assert estimate_tokens("") == 0


def test_tool_calls_always_carry_type_function_on_the_wire():
    # The API requires it; a reply that omits it (or a call built in code) still sends it.
    m = parse_message(
        {
            "role": "assistant",
            "tool_calls": [{"id": "a", "function": {"name": "f", "arguments": "{}"}}],
        }
    )
    assert m.to_openai()["tool_calls"][0]["type"] == "function"
    built = an.AssistantMessage(tool_calls=[an.ToolCall.make("b", "g")])
    assert built.to_openai()["tool_calls"][0] == {
        "id": "b",
        "type": "function",
        "function": {"name": "g", "arguments": ""},
    }
