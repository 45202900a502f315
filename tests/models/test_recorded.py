"""Recorded replies: one format, three keys, for every way a model call is answered from a
recording (cassettes by request, the response cache by request and repeat, a saved run's
replies by position)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import agentnb as an
from agentnb.errors import ConfigurationError
from agentnb.evals.replay import _Replies
from agentnb.models import (
    Cassette,
    ModelRequest,
    ModelResponse,
    Replies,
    Usage,
    by_position,
    by_repeat,
    by_request,
    reply_dict,
    reply_of,
)
from agentnb.models.replay import request_key

CASSETTES = Path(__file__).resolve().parents[2] / "data" / "cassettes"
ODD = "line\u2028separator and a lone \udcff"


def test_one_entry_per_line_served_in_recorded_order_the_last_repeated(tmp_path):
    path = tmp_path / "r.jsonl"
    replies = Replies(path)
    for body in ("first", "second"):
        replies.add({"key": "k", "response": {"body": body}})
    replies.add({"key": "other", "response": {"body": ODD}}, rewrite=True)
    again = Replies(path)
    assert [again.find("k")["response"]["body"] for _ in range(3)] == ["first", "second", "second"]
    assert again.find("other")["response"]["body"] == ODD and again.find("none") is None
    assert again.keys() == ["k", "other"] and len(again) == 3
    assert len(path.read_text(encoding="utf-8").split("\n")) == 4  # U+2028 stays in its line


def test_a_bad_line_is_refused_naming_it_or_skipped_and_listed(tmp_path):
    path = tmp_path / "r.jsonl"
    good = json.dumps({"key": "k", "response": {}})
    path.write_text(f'{good}\n{{"torn\n{{"key": 1, "response": {{}}}}\n', encoding="utf-8")
    with pytest.raises(ConfigurationError, match=r"r\.jsonl:2: not a recorded reply"):
        Replies(path)
    lenient = Replies(path, strict=False)
    assert [n for n, _ in lenient.bad_lines] == [2, 3] and lenient.find("k") is not None


def test_the_three_keys():
    request = {"method": "POST", "path": "/v1/chat/completions", "body": {"messages": []}}
    assert by_request(request) == request_key(request) and len(by_request(request)) == 32
    assert by_request({"b": 1, "a": 2}) == by_request({"a": 2, "b": 1})  # canonical
    assert by_repeat(["model", "messages"], 0) != by_repeat(["model", "messages"], 1)
    assert by_position(3) == "3"


def test_a_reply_round_trips_and_an_older_cache_usage_list_reads_the_same():
    reply = ModelResponse(an.AssistantMessage(content=ODD), Usage(3, 2, 5), "stop", "m")
    data = reply_dict(reply)
    assert data["usage"] == {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}
    back = reply_of(json.loads(json.dumps(data)))
    assert back.message == reply.message and back.usage == reply.usage
    assert reply_of({**data, "usage": [3, 2, 5, False]}).usage == Usage(3, 2, 5)
    with pytest.raises(ValueError, match="assistant message"):
        reply_of({"message": {"role": "user", "content": "x"}})


async def test_cassettes_the_cache_and_trace_replay_answer_from_one_format(tmp_path):
    # the cache: keyed by request and repeat
    path = tmp_path / "cache.jsonl"
    cache = an.evals.ResponseCache(path)
    model = an.models.FunctionModel(lambda request: "晴", name="m")
    request = ModelRequest([{"role": "user", "content": "天气"}])
    key = cache.key(model, request, 0)
    cache.put(key, await model.complete(request))
    assert isinstance(cache.replies, Replies)
    line = json.loads(path.read_text(encoding="utf-8"))
    assert line["key"] == key and set(line["response"]) == {
        "message",
        "usage",
        "finish_reason",
        "model",
    }
    assert an.evals.ResponseCache(path).get(key).message.text == "晴"
    # a saved run's replies: keyed by position
    played = _Replies(
        [{"role": "assistant", "content": "one"}, {"role": "assistant", "content": "two"}]
    )
    assert isinstance(played.replies, Replies) and played.replies.keys() == ["0", "1"]
    assert (await played.complete(request)).message.text == "one"
    # a cassette: keyed by request
    cassette = Cassette(CASSETTES / "plain_smollm2_stream.jsonl")
    assert isinstance(cassette.replies, Replies)


@pytest.mark.parametrize("name", sorted(p.name for p in CASSETTES.glob("*.jsonl")))
def test_the_committed_cassettes_are_recorded_replies_keyed_by_request(name):
    """data/cassettes needed no conversion: their lines were already entries of this format."""
    cassette = Cassette(CASSETTES / name)
    assert cassette.entries
    for entry in cassette.entries:
        assert entry["key"] == by_request(entry["request"]), name
        assert cassette.replies.find(entry["key"]) is not None
