from __future__ import annotations

import pytest

import agentnb as an
from tests.helpers import call, calls


def test_append_validates_and_tracks_pairing():
    s = an.Session()
    s.append({"role": "user", "content": "周五北京天气"})
    s.append(calls(call("a", "w", city="北京"), call("b", "w", city="上海")))
    assert not s.is_valid and s.open_calls == {"a": "w", "b": "w"}
    assert [str(p) for p in s.problems] == ["#1: calls a, b have no tool result yet"]
    assert [(p.index, p.kind) for p in s.problems] == [(1, "open")]
    s.append({"role": "tool", "tool_call_id": "a", "content": "晴"})
    s.append({"role": "tool", "tool_call_id": "b", "content": "雨"})
    assert s.is_valid and s.problems == []
    with pytest.raises(an.InvalidMessage):
        s.append({"role": "tool", "content": "no id"})


def test_problems_name_orphans_gaps_and_duplicates():
    s = an.Session(
        [
            {"role": "tool", "tool_call_id": "zz", "content": "orphan"},
            calls(call("a", "w"), call("a", "w")),
            {"role": "user", "content": "interrupts"},
        ]
    )
    assert [str(p) for p in s.problems] == [
        "#0: tool result for call 'zz' answers no open call",
        "#1: two tool calls share the id 'a'",
        "#1: calls a have no tool result before message #2",
    ]
    assert [p.kind for p in s.problems] == ["orphan_result", "duplicate_id", "unanswered"]
    with pytest.raises(an.InvalidConversation) as info:
        s.check()
    assert "session.repair()" in str(info.value) and len(info.value.problems) == 3


def test_repair_answers_missing_calls_and_drops_orphans():
    s = an.Session(
        [
            {"role": "user", "content": "x"},
            calls(call("a", "w"), call("b", "w")),
            {"role": "tool", "tool_call_id": "b", "content": "ok"},
            {"role": "user", "content": "next"},
            {"role": "tool", "tool_call_id": "nope", "content": "orphan"},
        ]
    )
    assert s.repair() == 2
    assert [m.get("tool_call_id") for m in s.to_openai()] == [None, None, "b", "a", None]
    assert '"ok": false' in s.to_openai()[3]["content"] and s.is_valid


def test_messages_view_is_read_only_with_a_helpful_error():
    s = an.Session([{"role": "user", "content": "x"}])
    with pytest.raises(TypeError, match=r"session.append\(message\)"):
        s.messages.append({"role": "user", "content": "y"})
    with pytest.raises(TypeError, match="read-only"):
        s.messages[0] = an.UserMessage("z")  # type: ignore[index]
    assert s.messages[0] == an.UserMessage("x") and len(s.messages) == 1


def test_edit_delete_truncate_fork_and_events():
    s = an.Session([{"role": "user", "content": "周五"}, {"role": "assistant", "content": "好"}])
    events = []
    s.subscribe(events.append)
    s.edit(0, content="周六")
    assert s.to_openai()[0] == {"role": "user", "content": "周六"}
    fork = s.fork(at=1)
    assert fork.to_openai() == [{"role": "user", "content": "周六"}] and fork.forked_from == s.id
    assert s.delete(-1).text == "好"
    s.append({"role": "assistant", "content": "再见"})
    assert s.truncate(1)[0].text == "再见"
    assert [type(e).__name__ for e in events] == [
        "SessionEdited",
        "SessionEdited",
        "MessageAppended",
        "SessionEdited",
    ]
    assert all(e.run_id is None and e.session_id == s.id for e in events)
    assert s.tokens == s.messages[0].tokens


def test_repr_and_html():
    s = an.Session([{"role": "user", "content": "<img src=x onerror=alert(1)>"}], id="trip-1")
    assert repr(s) == "<Session 'trip-1': 1 messages, ~11 tokens, valid>"
    html = s._repr_mimebundle_()["text/html"]
    assert "<img" not in html and "&lt;img" in html


def test_long_contents_fold_in_the_static_html():
    s = an.Session([{"role": "user", "content": "<b>" + "北京" * 400}])
    html = s._repr_mimebundle_()["text/html"]
    assert "<details><summary>&lt;b&gt;北京" in html and "(803 chars)" in html
    assert "<b>北京" not in html
