"""The DBOS backend under concurrency: first submits at once, max_queue held, no session kept
per task in a worker (issue 27 M16, M17, M18)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

import agentnb as an
from agentnb.models import FunctionModel
from agentnb.service import DBOS, QueueFull


def _echo() -> an.Agent:
    def reply(request: Any) -> dict[str, Any]:
        return {"role": "assistant", "content": f"{request.messages[-1]['content']} ok"}

    return an.Agent(model=FunctionModel(reply))


async def test_first_submits_at_once_all_land(tmp_path: Path) -> None:
    """M16: the start was marked done before its client existed: AttributeError 'NoneType'."""
    rt = an.Runtime(
        _echo(),
        store=an.SQLiteStore(tmp_path / "app.db"),
        backend=DBOS(f"sqlite:///{tmp_path / 'dbos.db'}", polling=0.05),
    )
    ids = await asyncio.gather(*(rt.submit(f"s{i}", f"m{i}") for i in range(10)))
    infos = [await rt.wait(t, timeout=60) for t in ids]
    assert [i.output for i in infos] == [f"m{i} ok" for i in range(10)]
    await rt.close()


async def test_max_queue_holds_under_concurrent_submits(tmp_path: Path) -> None:
    """M17: 21 accepted with max_queue=3 (the depth was read, then the task enqueued)."""
    url = f"sqlite:///{tmp_path / 'dbos.db'}"
    client = an.Runtime(
        _echo(), store=an.SQLiteStore(tmp_path / "app.db"), backend=DBOS(url, workers=False)
    )
    with pytest.raises(an.ConfigurationError, match="start a worker first"):
        await client.submit("early", "m")  # no worker ever ran on this database
    assert client.list() == []  # and nothing was kept of it
    made = an.Runtime(_echo(), store=an.SQLiteStore(tmp_path / "app.db"), backend=DBOS(url))
    await made.backend.start()  # a worker made DBOS's tables
    await made.close()
    rt = an.Runtime(
        _echo(),
        store=an.SQLiteStore(tmp_path / "app.db"),
        max_queue=3,
        backend=DBOS(url, workers=False, polling=0.05),
    )
    outcomes = await asyncio.gather(
        *(rt.submit(f"s{i}", f"m{i}") for i in range(21)), return_exceptions=True
    )
    accepted = [o for o in outcomes if isinstance(o, str)]
    refused = [o for o in outcomes if isinstance(o, QueueFull)]
    assert (len(accepted), len(refused)) == (3, 18), outcomes
    assert rt.counts()["pending"] == 3
    await rt.close()


async def test_a_worker_keeps_no_session_per_task(tmp_path: Path) -> None:
    """M18: a DBOS worker kept every session it ever served in memory."""
    rt = an.Runtime(
        _echo(),
        store=an.SQLiteStore(tmp_path / "app.db"),
        backend=DBOS(f"sqlite:///{tmp_path / 'dbos.db'}", polling=0.05),
    )
    ids = [await rt.submit(f"user-{i}", "hi") for i in range(40)]
    for task_id in ids:
        await rt.wait(task_id, timeout=60)
    assert len(rt._sessions) == 0  # each attempt read its session afresh, then let it go
    await rt.close()
