"""The optimiser's live view, kernel side: it follows the run, Stop stops it, a late view
catches up, the saved state shows the end, and every text is data."""

from __future__ import annotations

import agentnb as an
from agentnb.evals.optimise import Optimisation
from agentnb.travel import TravelModel
from agentnb.widgets import OptimiseView


def _start(budget=150):
    agent = an.travel.travel_agent(model=TravelModel("fabricate"), instructions="你是差旅助手。")
    return an.evals.optimise.start(
        agent, an.travel.task_set(), proposer=TravelModel().proposer(), budget=budget
    )


async def test_the_view_follows_the_run_to_its_end(comms):
    opt = _start()
    view = OptimiseView(opt, every=0.001)
    await opt.wait()
    updates = [m for m in comms[-1].custom() if m.get("op") == "update"]
    assert len(updates) >= 3
    assert [u["calls"] for u in updates] == sorted(u["calls"] for u in updates)
    seen = {c["id"] for u in updates for c in u["candidates"]}
    assert seen == {c.id for c in opt.candidates}
    assert any(u["current"].get("rationale") for u in updates)  # the rationale while it ran
    last = updates[-1]
    assert last["done"] and last["best"] == opt.best_id and last["calls"] == opt.metric_calls
    final = view.data  # what a saved notebook shows
    assert final["done"] and final["reason"] == opt.stop_reason
    promoted = next(c for c in final["candidates"] if c["id"] == opt.best_id)
    assert promoted["status"] == "promoted" and promoted["verdict"].startswith(
        f"{opt.best_id} is better"
    )
    rows = promoted["diff"]["instructions"]
    assert any(r["op"] == "added" for r in rows)
    assert view.sent_bytes < 100_000


async def test_stop_from_the_view_keeps_the_incumbent(comms):
    opt = _start(budget=300)
    OptimiseView(opt, every=0.001)
    comm = comms[-1]

    def stop_after_promotion(kind, data):
        if kind == "candidate" and data.status == "promoted":
            comm.deliver({"op": "stop"})

    opt.subscribe(stop_after_promotion)
    await opt.wait()
    assert opt.cancelled and opt.best.status == "promoted"
    last = comm.custom()[-1]
    assert last["stopped"] and last["done"] and "stopped by request" in last["reason"]


async def test_a_late_view_of_a_loaded_run_gets_the_whole_state(comms, tmp_path):
    opt = _start(budget=120)
    await opt.wait()
    back = Optimisation.load(opt.save(tmp_path / "o.jsonl"))
    OptimiseView(back)
    comms[-1].deliver({"op": "hello"})
    state = comms[-1].custom()[-1]
    assert state["op"] == "state" and len(state["data"]["candidates"]) == len(opt.candidates)
    assert state["data"]["best"] == opt.best_id


async def test_hostile_text_in_a_rationale_is_sent_as_data(comms):
    import json

    from agentnb.models import FunctionModel

    evil = "<img src=x onerror=alert(1)>\u2028\ud800"
    reply = json.dumps({"rationale": evil, "instructions": "你是差旅助手。\n" + evil})
    opt = an.evals.optimise.start(
        an.travel.travel_agent(instructions="你是差旅助手。"),
        an.travel.task_set(),
        proposer=FunctionModel(lambda r: reply, name="evil"),
        budget=120,
        patience=1,
    )
    view = OptimiseView(opt, every=0.001)
    await opt.wait()
    html = view._repr_mimebundle_()[0]["text/html"]
    assert "<img" not in html
    sent = json.dumps(comms[-1].custom(), ensure_ascii=False)
    assert "\ufffd" in sent or "\\ud800" not in sent  # a lone surrogate never reaches the comm
