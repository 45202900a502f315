"""The Store seam: a run commits after each tool round and at persist; edits commit; a second writer gets a conflict."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

import agentnb as an
from agentnb.models import ScriptedModel
from tests.helpers import call, calls


class RecordingStore(an.MemoryStore):
    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[str, int, int]] = []

    def commit(self, session_id: str, base: int, messages: Sequence[dict[str, Any]]) -> int:
        self.calls.append(("commit", base, len(messages)))
        return super().commit(session_id, base, messages)

    def rewrite(self, session_id: str, base: int, messages: Sequence[dict[str, Any]]) -> int:
        self.calls.append(("rewrite", base, len(messages)))
        return super().rewrite(session_id, base, messages)


async def test_a_run_commits_after_each_tool_round_and_at_persist(tools):
    store = RecordingStore()
    session = an.Session(id="trip-1", store=store)
    model = ScriptedModel([calls(call("c", "search_weather", city="北京", date="x")), "晴"])
    result = await an.Agent("sys", tools, model=model).run("天气", session=session)
    # user, assistant with the call and its result: one round; then the final answer
    assert store.calls == [("commit", 0, 3), ("commit", 1, 1)]
    persisted = result.trace.of_type(an.events.Persisted)[0]
    assert persisted.store == "memory" and persisted.version == 2 == session.version
    loaded = store.load("trip-1")
    assert loaded.to_openai() == session.to_openai() and loaded.version == 2


def test_edits_outside_runs_commit_and_rewrites_are_stored_as_rewrites():
    store = RecordingStore()
    session = an.Session([{"role": "user", "content": "a"}], id="s1", store=store)
    session.append({"role": "assistant", "content": "b"})
    session.replace(0, {"role": "user", "content": "A"})
    session.truncate(1)
    assert store.calls == [("commit", 0, 1), ("commit", 1, 1), ("rewrite", 2, 2), ("rewrite", 3, 1)]
    assert store.load("s1").to_openai() == [{"role": "user", "content": "A"}]


def test_a_second_writer_gets_a_conflict_naming_both_versions():
    store = an.MemoryStore()
    first = an.Session([{"role": "user", "content": "a"}], id="shared", store=store)
    second = store.load("shared")
    first.append({"role": "assistant", "content": "from one"})
    with pytest.raises(an.SessionConflict, match=r"version 1.*version 2") as info:
        second.append({"role": "assistant", "content": "from two"})
    assert (info.value.expected, info.value.actual) == (1, 2)
    assert [m["content"] for m in store.load("shared").to_openai()] == ["a", "from one"]
    with pytest.raises(an.SessionNotFound, match="no session 'nope'"):
        store.load("nope")
    with pytest.raises(an.ConfigurationError, match="session id"):
        an.Session(id="../etc/passwd")
