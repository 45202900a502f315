"""The look-alike tools (issue 42, #146): one schema, two tools, the descriptions decide."""

from __future__ import annotations

import agentnb as an

T = an.travel


def test_the_two_tools_differ_only_in_their_descriptions():
    sa, sb = (
        s["function"] for s in an.Toolset(T.lookalike_tools(T.DESCRIPTIONS["clear"])).schemas()
    )
    assert sa["parameters"] == sb["parameters"] and sa["description"] != sb["description"]
    rich = an.Toolset(T.lookalike_tools(T.DESCRIPTIONS["vague"], "rich")).schemas()[0]["function"]
    assert rich["parameters"]["properties"]["date"]["format"] == "date"


async def test_descriptions_decide_where_a_richer_schema_does_not():
    """002 §2.3: clear descriptions pass every task; vague ones, even with the richer schema,
    call no tool; swapped ones call the wrong tool."""
    base = T.travel_agent()
    variants = {
        "clear": base.copy(tools=T.lookalike_tools(T.DESCRIPTIONS["clear"])),
        "vague_rich": base.copy(tools=T.lookalike_tools(T.DESCRIPTIONS["vague"], "rich")),
        "swapped": base.copy(tools=T.lookalike_tools(T.DESCRIPTIONS["swapped"])),
    }
    tasks = T.description_tasks()
    ev = await an.evaluate(variants, tasks, progress=False)
    passed = ev.summary["passed"].to_dict()
    assert passed == {"clear": len(tasks), "vague_rich": 0, "swapped": 0}, passed
    steps = ev.runs.groupby("variant")["steps"].sum().to_dict()
    assert steps["vague_rich"] == 0 and steps["swapped"] == len(tasks), steps
