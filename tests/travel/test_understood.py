"""TravelModel.understood(…): a table of knobs with the line that set each, and the lines not
understood; the request inspector carries it beside the request (issue #16)."""

from __future__ import annotations

import agentnb as an
from agentnb.models.request import ModelRequest
from agentnb.travel import INSTRUCTIONS, TravelModel, travel_agent
from agentnb.widgets.inspectors import request_payload

EDIT = INSTRUCTIONS + "\n推荐最便宜的酒店。\n对 VIP 用户要热情一些。"


def test_understood_reads_an_agent_a_request_or_a_string_alike():
    model = TravelModel()
    agent = travel_agent(instructions=EDIT)
    prompt = agent.prompt()
    from_agent = model.understood(agent)
    from_request = model.understood(ModelRequest([prompt.system], prompt.tools))
    from_text = model.understood(EDIT)
    for table in (from_agent, from_request, from_text):
        assert table["hotel_choice"] == "cheapest" and table["tools"] == "first"
        assert table.not_understood == [("对 VIP 用户要热情一些。", "instructions")]
    frame = from_agent.frame
    assert frame.loc["hotel_choice", "set by"] == "推荐最便宜的酒店。"
    assert frame.loc["missing", "set by"] == "(default)" and frame.loc["missing", "where"] == ""
    assert set(frame.index[: len(from_agent.set)]) == set(from_agent.set)  # set knobs first
    text, html = repr(from_agent), from_agent.static_html()
    assert "hotel_choice = cheapest  [instructions]" in text and "not understood (1):" in text
    assert "<table" in html and "Not understood (1)" in html and "对 VIP 用户要热情一些。" in html
    assert "&lt;" in TravelModel().understood("<b>不要</b>编造。").static_html()  # escaped


async def test_the_request_inspector_carries_what_the_model_understood():
    agent = travel_agent(instructions=EDIT)
    session = an.Session()
    await agent.run("周五北京的酒店", session=session)
    shown = request_payload(session, 1, model=agent.model)
    rows = {r["knob"]: r for r in shown["understood"]["rows"]}
    assert rows["hotel_choice"]["value"] == "cheapest" and rows["hotel_choice"]["where"]
    assert shown["understood"]["not_understood"] == [
        {"line": "对 VIP 用户要热情一些。", "where": "instructions"}]  # fmt: skip
    view = an.widgets.SessionView(session, agent=agent)  # the view's agent's model
    assert request_payload(session, 1, view=view)["understood"] == shown["understood"]
    scripted = an.Agent("hi", [], an.models.ScriptedModel([{"role": "assistant", "content": "ok"}]))
    plain = an.Session()
    await scripted.run("hello", session=plain)
    assert "understood" not in request_payload(plain, 1, model=scripted.model)
