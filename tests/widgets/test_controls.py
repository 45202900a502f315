"""Run / Step / Pause / Stop / Reset: a background task on the running loop drives the run."""

from __future__ import annotations

import asyncio

import agentnb as an
from agentnb.widgets import SessionView, payload
from tests.helpers import eventually

REQUEST = "我周五从上海去北京出差，预算3000以内"


def slow_agent(delay: float = 0.05, fail: bool = False) -> an.Agent:
    inner = an.travel.TravelModel()

    async def think(request):
        await asyncio.sleep(delay)
        if fail:
            raise ConnectionError("the model went away")
        return await inner.complete(request)

    return an.travel.travel_agent(model=an.models.FunctionModel(think, name="slow"))


async def test_step_then_run_then_reset(comms):
    session = an.Session()
    view = SessionView(session, agent=an.travel.travel_agent())
    comm = comms[-1]
    comm.deliver({"op": "step", "text": REQUEST})
    await view.driver.task
    assert len(session) == 1
    assert view.status["state"] == "paused" and view.status["next"] == "assemble"
    comm.deliver({"op": "step"})
    await view.driver.task
    assert view.status["next"] == "call_model"
    comm.deliver({"op": "run"})
    await view.driver.task
    assert view.status["state"] == "stopped" and view.status["reason"] == "final_answer"
    assert len(session) == 10 and session.is_valid
    comm.deliver({"op": "reset"})
    assert len(session) == 0 and view.status["state"] == "idle"
    assert payload.unpack(view.snapshot)["messages"] == []


async def test_stop_cancels_a_running_run_and_the_session_stays_valid(comms):
    session = an.Session()
    view = SessionView(session, agent=slow_agent(0.05))
    comm = comms[-1]
    comm.deliver({"op": "run", "text": REQUEST})
    await eventually(lambda: len(session) >= 3)  # clicks arrive while the run goes on
    comm.deliver({"op": "stop"})
    await view.driver.task
    assert view.status["state"] == "stopped" and view.status["reason"] == "cancelled"
    assert session.is_valid
    state = payload.unpack(view.snapshot)
    assert state["status"]["reason"] == "cancelled"
    assert [m["w"] for m in state["messages"]] == session.wire()


async def test_pause_waits_between_stages_and_run_resumes(comms):
    session = an.Session()
    view = SessionView(session, agent=slow_agent(0.05))
    comm = comms[-1]
    comm.deliver({"op": "run", "text": REQUEST})
    await eventually(lambda: len(session) >= 1)  # the run is under way
    comm.deliver({"op": "pause"})
    await view.driver.task
    assert view.status["state"] == "paused" and not view.driver.run.done
    paused_at = len(session)
    await asyncio.sleep(0.1)
    assert len(session) == paused_at  # nothing moves while paused
    comm.deliver({"op": "run"})
    await view.driver.task
    assert view.status["reason"] == "final_answer"


async def test_a_failing_run_shows_its_error(comms):
    session = an.Session()
    view = SessionView(session, agent=slow_agent(0.0, fail=True))
    comm = comms[-1]
    comm.deliver({"op": "run", "text": REQUEST})
    await view.driver.task
    assert view.status["reason"] == "error"
    assert "the model went away" in view.status["error"]
    errors = [m for m in comm.custom() if m["op"] == "error"]
    assert errors and "ConnectionError" in errors[0]["detail"]
    assert isinstance(view.driver.error, an.AgentnbError) and session.is_valid


async def test_stop_reaches_a_run_started_elsewhere(comms):
    session = an.Session()
    view = SessionView(session, agent=slow_agent(0.05))
    comm = comms[-1]
    task = asyncio.ensure_future(slow_agent(0.05).run(REQUEST, session=session))
    await eventually(lambda: len(session) >= 2)
    comm.deliver({"op": "stop"})
    result = await task
    if getattr(session, "active_run", None) is None and result.stop_reason != "cancelled":
        # Before Session.active_run existed the view could not reach this run.
        assert view.status.get("note") == "nothing to stop"
    else:
        assert result.stop_reason == "cancelled" and session.is_valid
