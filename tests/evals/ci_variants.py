"""Variants for the CI runner's tests (``python -m agentnb eval ... --variants``)."""

from __future__ import annotations

import agentnb as an
from agentnb.travel import INSTRUCTIONS, TravelModel

TOOLS_FIRST = "你必须使用工具获取实时信息，只有工具返回结果后才能回答用户问题；不要编造航班、天气或酒店数据。\n"


def regressing():
    """The article's agent, and one without the tools-first rule on a fabricating model."""
    base = an.travel.travel_agent()
    worse = base.copy(
        instructions=INSTRUCTIONS.replace(TOOLS_FIRST, ""), model=TravelModel("fabricate")
    )
    return {"article": base, "no_tools_rule": worse}


def unchanged():
    base = an.travel.travel_agent()
    return {"article": base, "same": base.copy()}


def broken():
    """A variants factory that fails (a key missing from the environment, say)."""
    raise ValueError("OPENAI_API_KEY is not set")


# -- a two-of-thirteen-task regression on a deterministic model (issue 36) ---------------------
def _answer(request):
    return "ok"


def _worse_answer(request):
    asked = next(m["content"] for m in reversed(request.messages) if m["role"] == "user")
    return "no" if asked in ("task 0", "task 1") else "ok"


def thirteen():
    """13 tasks, each passing when the answer says "ok"."""
    check = an.checks.answer_contains("ok")
    return an.TaskSet([an.Task(f"t{i}", f"task {i}", [check]) for i in range(13)], name="thirteen")


def two_of_thirteen():
    """A deterministic variant that regresses on 2 of the 13 tasks, every time."""
    base = an.Agent("Answer.", model=an.models.FunctionModel(_answer, name="steady"))
    return {"base": base, "worse": base.copy(model=an.models.FunctionModel(_worse_answer))}
