"""After a crash: uncertain side effects, re-run lookups, the durable backends end to end."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

import agentnb as an
from agentnb.models import FunctionModel
from agentnb.service import DBOS, Retry
from agentnb.storage.postgres import PostgresStore
from tests.helpers import eventually
from tests.service import pgcluster as pg

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
import crash_agent  # noqa: E402

ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}

DOOMED = """
import asyncio, sys
import agentnb as an, crash_agent
async def main():
    rt = an.Runtime(crash_agent.make_agent(), store=an.SQLiteStore(sys.argv[1]))
    print(await rt.submit("trip", "task-1"), flush=True)
    await asyncio.sleep(60)  # killed long before
asyncio.run(main())
"""


def _lines(path: Path) -> list[list[str]]:
    return [line.split() for line in path.read_text().splitlines()] if path.exists() else []


async def test_a_booking_in_flight_at_a_crash_is_answered_uncertain(tmp_path: Path) -> None:
    effects, db = tmp_path / "effects.txt", tmp_path / "service.db"
    env = dict(ENV, PYTHONPATH=str(HERE), AGENTNB_EFFECTS=str(effects), AGENTNB_TOOL_SECONDS="30")
    proc = subprocess.Popen(
        [sys.executable, "-c", DOOMED, str(db)], env=env, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    task_id = proc.stdout.readline().strip()

    def booking() -> bool:
        assert proc.poll() is None, "the worker died before the booking"
        return any(kind == "effect" for kind, *_ in _lines(effects))

    await eventually(booking, 60, what="mid-booking")
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    proc.stdout.close()
    os.environ["AGENTNB_EFFECTS"] = str(effects)
    try:
        rt = an.Runtime(crash_agent.make_agent(), store=an.SQLiteStore(db))
        assert rt.status(task_id).status == "running"  # as the dead process left it
        assert await rt.recover() == [task_id]
        info = await rt.wait(task_id, timeout=10)
    finally:
        del os.environ["AGENTNB_EFFECTS"]
    assert (info.status, info.output) == ("done", "uncertain: task-1")
    kinds = [kind for kind, *_ in _lines(effects)]
    assert kinds == ["run", "effect"]  # the lookup's round had landed; the booking never re-ran
    session = rt.session("trip")
    assert session.is_valid
    results = [json.loads(m["content"]) for m in session.to_openai() if m["role"] == "tool"]
    assert results[0] == {"city": "北京", "train": "G1"}
    assert results[1]["kind"] == "uncertain" and "may or may not" in results[1]["error"]
    trace = rt.get_trace(task_id)
    uncertain = [e for e in trace if getattr(e, "kind", None) == "uncertain"]
    assert [e.call_id for e in uncertain] == [results[1]["call"]]  # the recovery run said so
    assert {e.trace_id for e in trace} == {info.trace_id} == {rt.result(task_id).trace_id}
    assert [a["status"] for a in info.attempts] == ["error", "done"]  # the lost one, marked


DOOMED_DBOS = DOOMED.replace(
    "store=an.SQLiteStore(sys.argv[1]))",
    "store=an.SQLiteStore(sys.argv[1]),\n"
    "        backend=an.service.DBOS(f'sqlite:///{sys.argv[1]}.dbos', polling=0.05))",
)


@pytest.mark.parametrize("idempotent", [False, True])
@pytest.mark.parametrize("backend", ["inprocess", "dbos"])
async def test_a_crash_in_a_turns_first_round_keeps_its_message_and_its_key(
    tmp_path: Path, idempotent: bool, backend: str
) -> None:
    """The booking is the turn's first round: the user's message had not been committed when
    the call was journalled, so recovery lost it and rebuilt the round one index lower, under
    another idempotency key (an idempotent booking ran again under a key the system had never
    seen; an uncertain answer quoted one the booking never had). Found by the hostile test."""
    effects, keys, db = tmp_path / "effects.txt", tmp_path / "keys.txt", tmp_path / "service.db"
    flags = {"AGENTNB_BOOK_FIRST": "1", "AGENTNB_IDEMPOTENT": "1" if idempotent else "0"}
    env = dict(ENV, PYTHONPATH=str(HERE), AGENTNB_EFFECTS=str(effects), AGENTNB_KEYS=str(keys))
    env.update(flags, AGENTNB_TOOL_SECONDS="30")
    script = DOOMED_DBOS if backend == "dbos" else DOOMED
    proc = subprocess.Popen(
        [sys.executable, "-c", script, str(db)], env=env, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    task_id = proc.stdout.readline().strip()

    def keyed() -> bool:
        assert proc.poll() is None, "the worker died before the booking"
        return keys.exists() and bool(keys.read_text().strip())

    await eventually(keyed, 60, what="mid-booking, its key written")
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    proc.stdout.close()
    saw = keys.read_text().split()
    os.environ.update(flags, AGENTNB_EFFECTS=str(effects), AGENTNB_KEYS=str(keys))
    try:
        agent = crash_agent.make_agent()
        if backend == "dbos":  # recover() starts this worker; it takes the dead one's task over
            engine = DBOS(f"sqlite:///{db}.dbos", polling=0.05)
            rt = an.Runtime(agent, store=an.SQLiteStore(db), backend=engine)
            assert await rt.recover() == []
        else:
            rt = an.Runtime(agent, store=an.SQLiteStore(db))
            assert await rt.recover() == [task_id]
        # recover() alone gets it done: no submit, no wait()
        await eventually(lambda: rt.status(task_id).done, 30, what="the recovered task's end")
        info = rt.status(task_id)
    finally:
        for name in (*flags, "AGENTNB_EFFECTS", "AGENTNB_KEYS"):
            del os.environ[name]
    messages = rt.session("trip").to_openai()
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant"]
    assert messages[0]["content"] == "task-1"  # the turn's message survived the crash
    result = json.loads(messages[2]["content"])
    if idempotent:  # run again, under the key it first ran with: the system dedupes by it
        assert keys.read_text().split() == saw * 2 and result == {"booked": "G1"}
        assert info.output == "booked: task-1"
    else:  # never run again; the answer names the key the booking was made under
        assert keys.read_text().split() == saw
        assert result["kind"] == "uncertain" and result["idempotency_key"] == saw[0]
        assert info.output == "uncertain: task-1"
    await rt.close()


async def test_recovery_reruns_calls_without_side_effects(tmp_path: Path) -> None:
    """A round cut short with a lookup and a booking in flight: the lookup runs again, the
    booking is answered uncertain, and the model is told so."""
    runs: list[str] = []

    @an.tool
    def lookup(q: str) -> str:
        """Read-only."""
        runs.append("lookup")
        return "fine"

    @an.tool(side_effects=True)
    def pay(amount: int) -> str:
        """Pays."""
        runs.append("pay")
        return "paid"

    seen: list[list[dict[str, Any]]] = []

    def reply(request: Any) -> dict[str, Any]:
        seen.append(request.messages)
        return {"role": "assistant", "content": "checked"}

    agent = an.Agent(tools=[lookup, pay], model=FunctionModel(reply))
    store = an.SQLiteStore(tmp_path / "s.db")
    rt = an.Runtime(agent, store=store)
    session = rt.session("s")
    assistant = {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": "a",
                "type": "function",
                "function": {"name": "lookup", "arguments": '{"q": "x"}'},
            },
            {
                "id": "b",
                "type": "function",
                "function": {"name": "pay", "arguments": '{"amount": 5}'},
            },
        ],
    }
    earlier = [  # an earlier task whose calls had the same ids (models reuse "call_0")
        {"role": "user", "content": "pay 3"},
        assistant,
        {"role": "tool", "tool_call_id": "a", "name": "lookup", "content": "fine"},
        {"role": "tool", "tool_call_id": "b", "name": "pay", "content": "paid"},
        {"role": "assistant", "content": "paid 3"},
    ]
    session.extend([*earlier, {"role": "user", "content": "pay 5"}])
    from agentnb.service.tasks import TaskState

    task = TaskState("t-0000000000000001abcdef", "s", "pay 5")
    rt.log.put(task)
    rt.log.start_len(task.id, len(earlier))
    rt.log.begin_call(task.id, "s", session.version, "b", "pay", assistant)  # before pay ran
    assert await rt.recover() == [task.id]
    info = await rt.wait(task.id, timeout=5)
    assert info.status == "done" and runs == ["lookup"]  # pay never ran again
    tool_results = {m["tool_call_id"]: m["content"] for m in seen[0][-3:] if m["role"] == "tool"}
    assert tool_results["a"] == "fine" and json.loads(tool_results["b"])["kind"] == "uncertain"
    assert [m["role"] for m in store.read("s")[1][len(earlier) :]] == [
        "user",
        "assistant",
        "tool",
        "tool",
        "assistant",
    ]
    assert not rt.log.open_calls(task.id)  # the journal is cleared once the task ended


def test_toolset_default_and_explicit_side_effects() -> None:
    def a() -> str:
        return ""

    @an.tool(side_effects=False)
    def b() -> str:
        return ""

    tools = an.Toolset([a, b], side_effects=True)
    assert tools.has_side_effects("a") and not tools.has_side_effects("b")
    assert not an.Toolset([a]).has_side_effects("a") and not tools.has_side_effects("zzz")
    assert "uncertain" in an.ERROR_KINDS


async def test_dbos_on_sqlite_in_one_process(tmp_path: Path) -> None:
    calls = [0]

    def reply(request: Any) -> dict[str, Any]:
        calls[0] += 1
        if calls[0] == 1:
            raise an.ModelCallFailed("503")
        return {"role": "assistant", "content": f"ok {request.messages[-1]['content']}"}

    store = an.SQLiteStore(tmp_path / "app.db")
    rt = an.Runtime(
        an.Agent(model=FunctionModel(reply)),
        store=store,
        retry=Retry(attempts=3, backoff=0.01),
        backend=DBOS(f"sqlite:///{tmp_path / 'dbos.db'}"),
    )
    ids = [await rt.submit(f"s{i % 2}", f"m{i}") for i in range(4)]
    infos = [await rt.wait(t, timeout=60) for t in ids]
    assert [i.status for i in infos] == ["done"] * 4
    assert sorted(i.attempt for i in infos) == [1, 1, 1, 2]  # the first call failed, retried
    retried = next(i for i in infos if i.attempt == 2)
    assert len(rt.get_trace(retried.id).of_type(an.events.RunStarted)) == 2
    assert [m["content"] for m in rt.session("s0").to_openai()] == ["m0", "ok m0", "m2", "ok m2"]
    await rt.close()
    later = an.Runtime(an.Agent(model=FunctionModel(reply)), store=an.SQLiteStore(store.path))
    assert later.status(ids[0]).status == "done"
    assert {e.task_id for e in later.get_trace(ids[0])} == {ids[0]}


async def test_cancel_reaches_a_running_task_on_dbos(tmp_path: Path) -> None:
    gate, asked = asyncio.Event(), threading.Event()

    async def reply(request: Any) -> dict[str, Any]:
        asked.set()
        await gate.wait()
        return {"role": "assistant", "content": "too late"}

    rt = an.Runtime(
        an.Agent(model=FunctionModel(reply)),
        store=an.SQLiteStore(tmp_path / "app.db"),
        backend=DBOS(f"sqlite:///{tmp_path / 'dbos.db'}", polling=0.05),
    )
    task_id = await rt.submit("s", "hold")
    # "running" is written before the attempt's step starts; a cancel then stops the workflow
    # before any run exists. This test is about a run in progress: wait for the model call.
    await eventually(lambda: asked.is_set() and rt.status(task_id).status == "running", 30)
    assert rt.cancel(task_id)
    info = await rt.wait(task_id, timeout=30)
    assert info.status == "cancelled"
    stops = await eventually(lambda: rt.get_trace(task_id).of_type(an.events.RunStopped))
    assert stops[-1].reason == "cancelled"  # the run itself was stopped, not just the record
    gate.set()
    await asyncio.sleep(0.3)
    rt.forget("s")
    session = rt.session("s")
    assert session.is_valid and [m["role"] for m in session.to_openai()] == ["user"]
    await rt.close()


async def test_the_worker_command(pg_admin: str, tmp_path: Path) -> None:
    store_url = pg.create_database(pg_admin, "cli_app")
    dbos_url = pg.create_database(pg_admin, "cli_dbos")
    effects = tmp_path / "effects.txt"
    env = dict(ENV, PYTHONPATH=str(HERE), AGENTNB_EFFECTS=str(effects), AGENTNB_TOOL_SECONDS="0")
    cmd = [
        sys.executable,
        "-m",
        "agentnb",
        "worker",
        "--agent",
        "crash_agent:make_agent",
        "--backend",
        dbos_url,
        "--store",
        store_url,
        "--executor-id",
        "solo",
    ]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    try:
        assert "ready" in proc.stdout.readline()
        store = PostgresStore(store_url)
        rt = an.Runtime(
            crash_agent.make_agent(), store=store, backend=DBOS(dbos_url, workers=False)
        )
        ids = [await rt.submit("trip", f"task-{i}") for i in range(3)]
        infos = [await rt.wait(t, timeout=60) for t in ids]
        assert [i.output for i in infos] == [f"booked: task-{i}" for i in range(3)]
        await rt.close()
        store.close()
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(20) == 0
        proc.stdout.close()


async def test_the_worker_never_shows_a_password(pg_admin: str, tmp_path: Path) -> None:
    """Given in a url's query or userinfo, the passwords of the store and of DBOS's database
    never appear in what the worker prints: not when it runs, not when it fails."""
    secret = "wOrk3r-s3cret"
    store_url = pg.create_database(pg_admin, "pw_app") + f"?password={secret}"
    dbos_url = pg.create_database(pg_admin, "pw_dbos") + f"?password={secret}"
    env = dict(ENV, PYTHONPATH=str(HERE), AGENTNB_EFFECTS=str(tmp_path / "e.txt"))
    base = [sys.executable, "-m", "agentnb", "worker", "--agent", "crash_agent:make_agent"]
    proc = subprocess.Popen(
        [*base, "--backend", dbos_url, "--store", store_url],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stderr is not None
    assert "ready" in proc.stdout.readline()
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0 and secret not in out + err
    downs = [
        f"postgresql://nobody:{secret}@127.0.0.1:1/x",
        f"postgresql://nobody@127.0.0.1:1/x?password={secret}",
        f"host=127.0.0.1 port=1 dbname=x user=nobody password={secret}",
    ]
    runs = [["--backend", dbos_url, "--store", down] for down in downs]
    for args in [*runs, ["--backend", downs[1], "--store", store_url]]:
        failed = subprocess.run(
            [*base, *args], env=env, capture_output=True, text=True, timeout=120
        )
        assert failed.returncode != 0, failed.stderr
        assert secret not in failed.stdout + failed.stderr
        assert failed.stderr.strip(), "it says why"


SUICIDE = """
import asyncio, os, signal, sys
import agentnb as an
from agentnb.models import FunctionModel

@an.tool
def die() -> str:
    "Kills the process that runs it (a bug no retry can fix)."
    os.kill(os.getpid(), signal.SIGKILL)
    return "never"

def reply(request):
    return {"role": "assistant", "content": "", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "die", "arguments": "{}"}}]}

async def main():
    rt = an.Runtime(an.Agent(tools=[die], model=FunctionModel(reply)),
                    store=an.SQLiteStore(sys.argv[1]), max_lost=3)
    if sys.argv[2] == "submit":
        print(await rt.submit("s", "go"), flush=True)
    else:
        print(" ".join(await rt.recover()), flush=True)
    await rt.join(timeout=30)  # it dies first, unless the task is given up
    await rt.close()
asyncio.run(main())
"""


async def test_a_task_that_kills_its_process_is_given_up(tmp_path: Path) -> None:
    """Issue 27 M15: recovered on every restart without limit, its status "running,
    attempt 0". After three lost attempts it ends in error, saying why."""
    db = tmp_path / "app.db"
    for n in range(4):  # the submit, then restarts that each take it over and die again
        out = subprocess.run(
            [sys.executable, "-c", SUICIDE, str(db), "submit" if n == 0 else "recover"],
            env=ENV,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert out.returncode == (-signal.SIGKILL if n < 3 else 0), out.stderr
        if n == 0:
            task_id = out.stdout.strip()
        later = an.Runtime(crash_agent.make_agent(), store=an.SQLiteStore(db))
        info = later.status(task_id)
        if n < 3:
            assert (info.status, info.attempt) == ("running", n + 1)  # each attempt on record
    assert info.status == "error" and "stopped 3 times" in (info.error or "")
    assert [a["status"] for a in info.attempts] == ["error"] * 3
    assert await later.recover() == []  # over: no restart takes it again


async def test_a_torn_or_foreign_task_row_is_shown_not_fatal(tmp_path: Path) -> None:
    """Issue 27 M21: one row with an unknown field or torn JSON broke list, counts and
    recover with a TypeError."""
    import sqlite3

    db = tmp_path / "app.db"
    rt = an.Runtime(crash_agent.make_agent(), store=an.SQLiteStore(db))
    good = await rt.submit("trip", "task-0")
    await rt.wait(good, timeout=10)
    await rt.close()
    with sqlite3.connect(db) as con:
        (body,) = con.execute("SELECT body FROM agentnb_tasks WHERE id = ?", (good,)).fetchone()
        row = json.loads(body)
        row["from_a_later_release"] = {"x": 1}  # an unknown field
        con.execute("UPDATE agentnb_tasks SET body = ? WHERE id = ?", (json.dumps(row), good))
        con.execute(
            "INSERT INTO agentnb_tasks (id, session_id, body) VALUES ('t-torn', 'trip', ?)",
            (body[: len(body) // 2],),  # torn: cut mid-way
        )
    later = an.Runtime(crash_agent.make_agent(), store=an.SQLiteStore(db))
    infos = {i.id: i for i in later.list()}
    assert infos[good].status == "done"  # the unknown field is left out
    assert infos["t-torn"].status == "error" and "cannot be read" in (infos["t-torn"].error or "")
    assert later.counts()["error"] == 1 and later.counts()["done"] == 1
    assert await later.recover() == []
    await later.close()
