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
    with pytest.raises(an.StoreError, match="could not be opened") as caught:
        PostgresStore("postgresql://nobody:secret@127.0.0.1:1/x", connect_timeout=1)
    assert "secret" not in str(caught.value)


SECRET = "s3cr3t-Pa55/word"  # a slash: the url form percent-encodes it


def _forms(host: str = "127.0.0.1", port: int = 1, db: str = "x") -> dict[str, str]:
    from urllib.parse import quote

    return {
        "userinfo": f"postgresql://nobody:{quote(SECRET, safe='')}@{host}:{port}/{db}",
        "query": f"postgresql://nobody@{host}:{port}/{db}?password={quote(SECRET, safe='')}",
        "keywords": f"host={host} port={port} dbname={db} user=nobody password={SECRET}",
    }


def _shown(exc: BaseException) -> str:
    import traceback

    return "".join(traceback.format_exception(exc))


@pytest.mark.parametrize("form", ["userinfo", "query", "keywords"])
def test_the_password_never_shows_in_an_error(form: str) -> None:
    from urllib.parse import quote

    with pytest.raises(an.StoreError) as caught:
        PostgresStore(_forms()[form], connect_timeout=1)
    text = _shown(caught.value)
    assert "could not be opened" in text
    assert SECRET not in text and quote(SECRET, safe="") not in text


@pytest.mark.parametrize("form", ["query", "keywords"])
def test_the_password_never_shows_in_repr_or_in_later_errors(pg_url: str, form: str) -> None:
    from urllib.parse import quote, urlsplit

    parts = urlsplit(pg_url)  # the test cluster trusts every local connection
    url = _forms(parts.hostname or "", parts.port or 0, parts.path.lstrip("/"))[form]
    store = PostgresStore(url.replace("user=nobody", "user=postgres").replace("nobody", "postgres"))
    assert SECRET not in repr(store) and quote(SECRET, safe="") not in repr(store)
    with pytest.raises(an.StoreError) as caught:
        store.read("nul\x00id")
    assert "NUL" in str(caught.value) and SECRET not in _shown(caught.value)
    store.close()


def test_nul_characters_are_store_errors_not_driver_errors(pg_url: str) -> None:
    store = PostgresStore(pg_url)
    for call in (
        lambda: store.read("a\x00b"),
        lambda: store.version("a\x00b"),
        lambda: store.add_memory("user\x00", {"fact": "x"}),
        lambda: store.memory_rows("user\x00"),
    ):
        with pytest.raises(an.StoreError, match="NUL"):
            call()
    session = an.Session(id="fine", store=store)
    session.append({"role": "user", "content": "a NUL in text is fine: \x00"})
    assert store.load("fine").to_openai() == session.to_openai()
    store.close()


def test_a_server_restart_is_survived_and_a_dead_server_is_a_store_error() -> None:
    from tests.service import pgcluster as pg

    with pg.cluster() as server:
        url = pg.create_database(server.url, "restarts")
        store = PostgresStore(url, connect_timeout=2)
        session = an.Session(id="s", store=store)
        session.append({"role": "user", "content": "before"})
        server.restart()  # every connection is dropped
        assert store.load("s").to_openai() == session.to_openai()  # a read reconnects
        server.restart()
        session.append({"role": "assistant", "content": "after"})  # and so does a write
        assert [m["content"] for m in store.read("s")[1]] == ["before", "after"]
        server.stop()
        with pytest.raises(an.StoreError, match="could not read session 's'"):
            store.read("s")
        with pytest.raises(an.StoreError):
            session.append({"role": "user", "content": "while down"})
        server.start()
        assert store.version("s") == 2  # nothing landed while it was down
        store.close()
