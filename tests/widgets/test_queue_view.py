"""QueueView, kernel side: one anywidget whose rows follow the tasks, whose clicks open a
session (composed in place by reference) and cancel a task, and whose snapshot lets a late
view draw every row."""

from __future__ import annotations

import asyncio
from typing import Any

import agentnb as an
from agentnb.models import FunctionModel
from agentnb.widgets import QueueView, SessionView
from agentnb.widgets.base import ESM, Widget
from agentnb.widgets.payload import unpack
from tests.helpers import eventually


def _comm(comms: list[Any], view: QueueView) -> Any:
    return next(c for c in comms if c.comm_id == view.comm.comm_id)


async def test_rows_update_while_tasks_run_and_clicks_work(comms: list[Any]) -> None:
    gate = asyncio.Event()

    async def reply(request: Any) -> dict[str, Any]:
        if request.messages[-1]["content"] == "slow":
            await gate.wait()
        await asyncio.sleep(0.001)
        return {"role": "assistant", "content": "ok"}

    rt = an.Runtime(an.Agent(model=FunctionModel(reply)), max_concurrency=4)
    view = rt.view(interval=0.02)
    assert isinstance(view, QueueView) and isinstance(view, Widget)  # one anywidget
    assert view._esm == ESM and "renderQueue" in ESM  # the one ES module, no second bundle
    comm = _comm(comms, view)
    comm.deliver({"op": "hello"})  # a view rendered: it gets the whole (empty) table
    slow = await rt.submit("u-slow", "slow")
    ids = [await rt.submit(f"u{i % 20}", f"m{i}") for i in range(200)]

    def rows() -> dict[str, dict[str, Any]]:  # each row as the browser last got it
        return {r["id"]: r for m in comm.custom() if m["op"] == "rows" for r in m["rows"]}

    await eventually(lambda: all(rows().get(i, {}).get("status") == "done" for i in ids))
    sent = [m for m in comm.custom() if m["op"] == "rows"]
    assert len(sent) > 2  # several updates while they ran, not one at the end
    seen: dict[str, dict[str, Any]] = {}
    statuses: dict[str, set[str]] = {}
    for m in sent:
        for row in m["rows"]:
            seen[row["id"]] = row
            statuses.setdefault(row["id"], set()).add(row["status"])
    assert all(seen[i]["status"] == "done" for i in ids)
    assert seen[slow]["status"] == "running" and sent[-1]["counts"]["running"] == 1
    assert view.sent < 5 * 201  # only changed rows travel
    comm.deliver({"op": "open", "task": ids[7]})  # a click on a row
    assert isinstance(view.opened, SessionView)
    assert view.opened.session is rt.session("u7")
    assert view.view == f"anywidget:{view.opened.model_id}" and view.selected == ids[7]
    comm.deliver({"op": "cancel", "task": slow, "id": 1})  # Cancel on the running row
    info = await rt.wait(slow, timeout=5)
    assert (info.status, info.stop_reason) == ("cancelled", "cancelled")
    assert {"op": "reply", "id": 1, "data": {"cancelled": True}} in comm.custom()
    await eventually(lambda: rows()[slow]["status"] == "cancelled")
    assert rt.session("u-slow").is_valid
    view.close()
    gate.set()
    await rt.close()


async def test_a_late_view_draws_every_row_from_the_snapshot(comms: list[Any]) -> None:
    async def reply(request: Any) -> dict[str, Any]:
        return {"role": "assistant", "content": "ok"}

    rt = an.Runtime(an.Agent(model=FunctionModel(reply)))
    ids = [await rt.submit(f"u{i}", f"m{i}") for i in range(30)]
    await rt.join(timeout=10)
    view = rt.view(refresh_every=0)
    state = unpack(view.snapshot)
    assert [r["id"] for r in state["rows"]] == ids and state["counts"]["done"] == 30
    more = await rt.submit("late", "one more")
    await rt.wait(more, timeout=5)
    view.flush()  # the change travels as a message, and the snapshot follows (refresh_every=0)
    assert unpack(view.snapshot)["rows"][-1]["id"] == more
    sent = [m for m in _comm(comms, view).custom() if m["op"] == "rows"]
    assert [r["id"] for r in sent[-1]["rows"]] == [more]
    view.close()
    await rt.close()


async def test_approve_and_deny_from_the_queue_and_the_session_view(comms: list[Any]) -> None:
    from tests.service import approval_agent

    rt = an.Runtime(approval_agent.make_agent())
    view = rt.view(interval=0.02)
    comm = _comm(comms, view)
    first, second = await rt.submit("a", "30"), await rt.submit("b", "3000")

    def shown() -> dict[str, dict[str, Any]]:  # each row as the browser last got it
        return {r["id"]: r for m in comm.custom() if m["op"] == "rows" for r in m["rows"]}

    await eventually(lambda: len(shown().get(first, {}).get("approvals") or ()) == 1)
    rows = shown()
    (ask,) = rows[first]["approvals"]
    assert rows[first]["status"] == "awaiting_approval" and ask["tool"] == "pay"
    comm.deliver({"op": "approve", "task": first, "call": ask["call_id"], "digest": ask["digest"]})
    assert (await rt.wait(first, timeout=5)).output == "paid 30"
    opened = view.open_task(second)  # its session's view gets Approve / Deny too
    waiting = opened.state()["waiting"]
    assert list(waiting) == ["p1"] and waiting["p1"]["can"] is True
    session_comm = next(c for c in comms if c.comm_id == opened.comm.comm_id)
    session_comm.deliver({"op": "deny", "call": "p1", "digest": waiting["p1"]["digest"]})
    info = await rt.wait(second, timeout=5)
    assert info.output == "denied: denied in the view"
    await eventually(lambda: opened.state()["waiting"] == {})
    view.close()
    await rt.close()


async def test_a_view_with_controls_approves_and_resumes_its_run(comms: list[Any]) -> None:
    from tests.service import approval_agent

    session = an.Session()
    view = SessionView(session, agent=approval_agent.make_agent())
    view_comm = next(c for c in comms if c.comm_id == view.comm.comm_id)
    view_comm.deliver({"op": "run", "text": "30"})
    await eventually(lambda: view.state()["waiting"])
    (call,) = view.state()["waiting"].values()
    assert call["can"] and view.status["reason"] == "awaiting_approval"
    assert [m["op"] for m in view_comm.custom()].count("waiting") == 0  # came with its event
    view_comm.deliver({"op": "approve", "call": call["call_id"], "digest": call["digest"]})
    await eventually(lambda: view.status.get("reason") == "final_answer")
    assert session.to_openai()[-1]["content"] == "paid 30" and view.state()["waiting"] == {}
    keys = {
        e["call_id"]: e["idempotency_key"] for e in view.state()["events"] if "idempotency_key" in e
    }
    assert keys["p1"].startswith(f"{session.id}:1:p1:")  # the call's key, shown on its card
    view.close()
