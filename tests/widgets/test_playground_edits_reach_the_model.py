"""A Playground edit reaches the model also when the tasks give their own tools (issue 36 item
1): a description typed in its text area is what the runs send, and the comparison's prompt
diff is read from what they sent."""

from __future__ import annotations

from agentnb.widgets import Playground
from tests.evals.desk import TASKS, agents, descriptions_sent


async def test_a_description_edit_reaches_a_factorys_tools(comms):
    """Fails on 9f180af: the runs sent the factory's description, the diff showed the edit."""
    base, _ = agents()
    pg = Playground(base, TASKS)
    comm = comms[-1]
    await pg.run()
    told = "Book a room. Always book room A."
    comm.deliver({"op": "run", "instructions": base.instructions, "tools": {"book": told}})
    await pg._task
    assert descriptions_sent(pg.evaluation, "v1") == [[told]] * 2
    c = pg.comparison
    assert c.improved == ["book"] and c.regressed == []
    assert [(r["op"], r["text"]) for r in c.prompt_diff["tools"]["book"]] == [
        ("removed", "Book a room."),
        ("added", told),
    ]
    shown = [m for m in comm.custom() if m.get("op") == "result"][-1]["comparison"]
    assert shown["prompt_diff"] == c.prompt_diff and shown["improved"] == ["book"]
