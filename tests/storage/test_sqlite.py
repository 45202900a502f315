"""SQLiteStore: sessions survive processes and crashes; writers never interleave."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import agentnb as an
from agentnb.models import FunctionModel, ScriptedModel
from agentnb.testing import assert_valid_conversation
from tests.helpers import call, calls, eventually_sync

ROOT = Path(__file__).resolve().parents[1]


def python(code: str, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a fresh interpreter (another process), with the repo importable."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
    )


def test_a_session_saved_in_one_process_continues_in_another(tmp_path):
    db = tmp_path / "trips.db"
    store = an.SQLiteStore(db)
    agent = an.travel.travel_agent()
    first = agent.run_sync(
        "我周五从上海去北京出差，预算3000以内", session=an.Session(id="trip-1", store=store)
    )
    assert first.stop_reason == "final_answer"
    out = python(
        """
        import sys, agentnb as an
        store = an.SQLiteStore(sys.argv[1])
        session = store.load("trip-1")
        before = len(session)
        result = an.travel.travel_agent().run_sync("那周六的天气呢？", session=session)
        print(before, len(session), result.stop_reason, store.version("trip-1"))
        """,
        str(db),
    )
    assert out.returncode == 0, out.stderr
    before, after, reason, version = out.stdout.split()
    assert int(before) == len(first.session) and int(after) > int(before)
    assert reason == "final_answer" and int(version) > first.session.version
    reloaded = store.load("trip-1")
    assert len(reloaded) == int(after)
    assert_valid_conversation(reloaded)
    assert store.list() == ["trip-1"]
    with pytest.raises(an.SessionNotFound):
        store.load("trip-2")
    store.delete("trip-1")
    assert store.list() == []


def test_kill_9_mid_run_loses_at_most_the_round_in_flight(tmp_path):
    db = tmp_path / "crash.db"
    script = """
        import asyncio, sys, agentnb as an

        @an.tool
        async def step(n: int) -> dict:
            "A slow tool: each round takes a while."
            await asyncio.sleep(0.05)
            return {"n": n}

        replies = [
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": f"c{i}", "type": "function",
                 "function": {"name": "step", "arguments": '{"n": %d}' % i}}]}
            for i in range(1000)
        ]
        agent = an.Agent("sys", [step], model=an.models.ScriptedModel(replies),
                         max_iterations=1000, repeat_limit=0)
        session = an.Session(id="long", store=an.SQLiteStore(sys.argv[1]))
        print("started", flush=True)
        agent.run_sync("go", session=session)
    """
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(script), str(db)],
        stdout=subprocess.PIPE,
        env=env,
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == b"started"
    store = an.SQLiteStore(db)
    eventually_sync(lambda: store.version("long") >= 5, 30, what="five rounds committed")
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    proc.stdout.close()
    version = store.version("long")
    assert version >= 5
    session = store.load("long")
    assert_valid_conversation(session)  # never a call without its result
    rounds = sum(1 for m in session.messages if m.role == "tool")
    assert rounds == version  # each commit was one whole round: nothing half-written
    assert proc.returncode == -signal.SIGKILL


def test_two_processes_racing_on_one_session_one_gets_a_conflict(tmp_path):
    db = tmp_path / "race.db"
    store = an.SQLiteStore(db)
    an.Session([{"role": "user", "content": "start"}], id="shared", store=store)
    script = """
        import sys, time, agentnb as an
        store = an.SQLiteStore(sys.argv[1])
        session = store.load("shared")          # both read version 1 ...
        time.sleep(float(sys.argv[3]))           # ... and write after the other one
        try:
            session.append({"role": "assistant", "content": sys.argv[2]})
            print("ok")
        except an.SessionConflict as exc:
            print("conflict", exc.expected, exc.actual)
    """
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", textwrap.dedent(script), str(db), name, delay],
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        for name, delay in (("first", "0.5"), ("second", "2.0"))
    ]
    outputs = [p.communicate(timeout=60)[0].strip() for p in procs]
    assert outputs == ["ok", "conflict 1 2"]
    assert [m["content"] for m in store.load("shared").to_openai()] == ["start", "first"]


async def test_300_concurrent_runs_on_distinct_sessions_never_cross_talk():
    async def echo(request: an.models.ModelRequest) -> str:
        await asyncio.sleep(0.05)
        return "echo: " + request.messages[-1]["content"]

    agent = an.Agent("sys", model=FunctionModel(echo))
    sessions = [an.Session(id=f"s{i}") for i in range(300)]
    start = time.monotonic()
    results = await asyncio.gather(
        *(agent.run(f"hello {i}", session=s) for i, s in enumerate(sessions))
    )
    wall = time.monotonic() - start
    for i, (session, result) in enumerate(zip(sessions, results, strict=True)):
        assert result.output == f"echo: hello {i}"
        assert [m.text for m in session.messages] == [f"hello {i}", f"echo: hello {i}"]
        assert {e.session_id for e in result.events} == {f"s{i}"}
    assert wall < 2.0  # they ran together: one run takes 0.05 s, 300 in a row would take 15 s


async def test_50_concurrent_runs_on_one_session_serialise():
    order: list[str] = []

    async def slow(request: an.models.ModelRequest) -> str:
        text = request.messages[-1]["content"]
        order.append(text)
        await asyncio.sleep(0.002)
        order.append(text)
        return "done " + text

    session = an.Session()
    agent = an.Agent("", model=FunctionModel(slow))
    await asyncio.gather(*(agent.run(f"q{i}", session=session) for i in range(50)))
    assert all(order[i] == order[i + 1] for i in range(0, 100, 2))  # never interleaved
    assert len(session) == 100
    assert_valid_conversation(session)


async def test_switching_the_lock_off_reproduces_interleaving(tools):
    """Article 000 §5.3: two runs on one unlocked thread mix their messages."""

    both_asked = asyncio.Event()  # each run's first call waits for the other's: no timing luck
    asked = []

    async def slow(request: an.models.ModelRequest) -> dict:
        if request.messages[-1]["role"] == "tool":
            return {"role": "assistant", "content": "done"}
        asked.append(request)
        if len(asked) >= 2:
            both_asked.set()
        await asyncio.wait_for(both_asked.wait(), 5)
        return calls(call(f"c{len(asked)}", "search_weather", city="北京", date="x"))

    session = an.Session(lock=False)
    agent = an.Agent("", tools, model=FunctionModel(slow))
    results = await asyncio.gather(
        agent.run("user A", session=session),
        agent.run("user B", session=session),
        return_exceptions=True,
    )
    roles = [m.role for m in session.messages]
    assert [m.text for m in session.messages[:2]] == ["user A", "user B"]  # B cut into A's turn
    assert roles[2:4] == ["assistant", "assistant"]  # both calls before any result
    assert all(isinstance(r, an.InvalidConversation) for r in results)  # the runtime noticed
    assert session.problems  # and the thread is corrupted, as the article warns
    locked = an.Session()
    await asyncio.gather(agent.run("user A", session=locked), agent.run("user B", session=locked))
    assert [m.text for m in locked.messages if m.role == "user"] == ["user A", "user B"]
    assert locked.messages[1].role == "assistant"  # A's turn finished before B's began
    assert_valid_conversation(locked)


def test_jsonl_export_and_import(tmp_path):
    store = an.SQLiteStore(tmp_path / "a.db")
    model = ScriptedModel([calls(call("c", "f", x=1)), "ok"])

    @an.tool
    def f(x: int) -> int:
        """Identity."""
        return x

    an.Agent("", [f], model=model).run_sync("hi", session=an.Session(id="t", store=store))
    path = store.export_jsonl("t", tmp_path / "t.jsonl")
    header = json.loads(path.read_text(encoding="utf-8").split("\n")[0])
    assert header == {"agentnb_session": "t", "version": 2}
    other = an.MemoryStore()
    imported = other.import_jsonl(path)
    assert imported.to_openai() == store.load("t").to_openai()
    with pytest.raises(an.ConfigurationError, match="already in this store"):
        other.import_jsonl(path)
    assert other.import_jsonl(path, session_id="t2").id == "t2"
