"""PostgresStore keeps SQLiteStore's contract: versions, SessionConflict, whole commits."""

from __future__ import annotations

import threading

import pytest

import agentnb as an
from agentnb.models import ScriptedModel
from agentnb.storage.postgres import PostgresStore


def test_round_trip_versions_and_conflict(pg_url: str) -> None:
    store = PostgresStore(pg_url)
    session = an.Session(id="trip-1", store=store)
    session.append({"role": "user", "content": "周五上海到北京 \ud800 lone surrogate"})
    assert store.version("trip-1") == 1
    assert store.list() == ["trip-1"]
    other = PostgresStore(pg_url).load("trip-1")
    assert other.to_openai() == session.to_openai()
    session.append({"role": "assistant", "content": "好的"})
    with pytest.raises(an.SessionConflict) as caught:
        other.append({"role": "assistant", "content": "second writer"})
    assert (caught.value.expected, caught.value.actual) == (1, 2)
    assert [m["content"] for m in store.read("trip-1")[1]] == [
        "周五上海到北京 \ud800 lone surrogate",
        "好的",
    ]
    session.truncate(1)  # a rewrite
    assert store.read("trip-1") == (3, [session.to_openai()[0]])
    store.delete("trip-1")
    with pytest.raises(an.SessionNotFound):
        store.load("trip-1")
    with pytest.raises(an.SessionNotFound):
        store.delete("trip-1")
    first = store.add_memory("u1", {"fact": "prefers window seats"})
    store.add_memory("u1", {"fact": "vegetarian"})
    store.add_memory("u1", {"fact": "budget 3000"}, cap=2)
    assert store.memories("u1") == [{"fact": "vegetarian"}, {"fact": "budget 3000"}]
    assert [item for _, item in store.memory_rows("u1", after=first + 1)] == [
        {"fact": "budget 3000"}
    ]


def test_racing_writers_never_interleave(pg_url: str) -> None:
    """Threads with their own connections commit on the same base: exactly one wins each time."""
    PostgresStore(pg_url).commit("race", 0, [{"role": "user", "content": "start"}])
    wins: list[int] = []
    losses: list[an.SessionConflict] = []

    def writer(i: int) -> None:
        store = PostgresStore(pg_url)
        base = store.version("race")
        try:
            wins.append(store.commit("race", base, [{"role": "user", "content": f"w{i}"}]))
        except an.SessionConflict as exc:
            losses.append(exc)
        store.close()

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    version, messages = PostgresStore(pg_url).read("race")
    assert len(wins) + len(losses) == 12 and wins
    assert version == 1 + len(wins) == len(messages)
    assert len({m["content"] for m in messages}) == len(messages)  # nothing written twice


async def test_agent_runs_on_postgres(pg_url: str) -> None:
    store = PostgresStore(pg_url)
    agent = an.Agent(model=ScriptedModel([{"role": "assistant", "content": "done"}]))
    session = an.Session(id="s", store=store)
    result = await agent.run("hi", session=session)
    assert result.stop_reason == "final_answer"
    assert store.load("s").to_openai() == session.to_openai()


def test_unreachable_server_is_a_store_error() -> None:
    with pytest.raises(an.StoreError, match="cannot use") as caught:
        PostgresStore("postgresql://nobody:secret@127.0.0.1:1/x", connect_timeout=1)
    assert "secret" not in str(caught.value)
