"""travel_agent(): the assistant of the source articles, ready to run offline."""

from __future__ import annotations

from datetime import date
from typing import Any

from ..agent import Agent
from ..models.base import ModelLike
from .article import article_tools
from .dates import DEFAULT_TODAY
from .model import TravelModel
from .tools import TravelTools

__all__ = ["INSTRUCTIONS", "INSTRUCTIONS_EN", "travel_agent"]

#: After article 000 §2.2 (role, tools first, budget), §3.1 and §5.1 (finish, do not repeat),
#: §5.2 (tool errors) and §6 (the output rules).
INSTRUCTIONS = """你是差旅助手，负责帮用户安排差旅行程。
你必须使用工具获取实时信息，只有工具返回结果后才能回答用户问题；不要编造航班、天气或酒店数据。
如果一次查询就能获得足够信息，不要重复查询同一个工具；所需信息收集完成后，直接给出完整回答，不要继续调用工具。
工具返回 error 字段时，说明该信息不可用，请明确告知用户，并基于现有信息给出建议。
预算不足时需要向用户说明原因，并给出备选方案。
输出规范：最终回答必须列出航班号与起降时间、票价、天气情况、酒店及价格，并对预算给出结论。"""

INSTRUCTIONS_EN = """You are a travel assistant who plans business and leisure trips.
You must use the tools to get live information, and answer only after the tools have returned;
never make up flights, weather or hotels.
If one search gives enough information, do not repeat it; once you have what you need, answer
in full and stop calling tools.
When a tool returns an error, say that the information is unavailable and advise with what you have.
When the budget is not enough, say why and offer an alternative.
Output rules: the final answer lists flight number and times, fare, weather, hotel and price,
and a verdict on the budget."""


def travel_agent(
    model: ModelLike | None = None,
    *,
    language: str = "zh",
    today: date | str = DEFAULT_TODAY,
    tools: TravelTools | None = None,
    faults: dict[str, str] | None = None,
    instructions: str | None = None,
    schemas: str = "agentnb",
    max_iterations: int = 6,
    final_answer_on_stop: bool = True,
    **options: Any,
) -> Agent:
    """The travel assistant: instructions, the four tools and a model.

    ``model`` defaults to the embedded :class:`TravelModel` (deterministic, offline).
    At ``max_iterations`` (6, as article 000 §5.1 suggests) the model is asked once more,
    tools off, to answer with what it has (000 §3.1). ``language`` picks the instructions
    ("zh" after article 000, or "en"); ``today`` is the reference date for 周五/明天 (for the
    tools and the model); ``tools`` lets you keep a :class:`TravelTools` handle to inject
    faults; ``schemas="article"`` offers article 000's own tool schemas (ISO dates, no
    ``nights``: see :mod:`agentnb.travel.article`); other options (``parallel_tool_calls``,
    ``repeat_limit``, ...) go to :class:`~agentnb.Agent`.

    Every line of the default instructions sets a knob of the model (tools first, stop once
    you have enough, the next day after a failure, budget alternatives, the output rules):
    see ``TravelModel().understood(agent)`` and ``TravelModel.rules()``.
    """
    if language not in ("zh", "en"):
        raise ValueError(f"language must be 'zh' or 'en', not {language!r}")
    if schemas not in ("agentnb", "article"):
        raise ValueError(f"schemas must be 'agentnb' or 'article', not {schemas!r}")
    desk = tools if tools is not None else TravelTools(today, faults=faults)
    if instructions is None:
        instructions = INSTRUCTIONS if language == "zh" else INSTRUCTIONS_EN
    return Agent(
        instructions,
        desk.tools if schemas == "agentnb" else article_tools(desk),
        model if model is not None else TravelModel(today=desk.today),
        name="travel-assistant",
        max_iterations=max_iterations,
        final_answer_on_stop=final_answer_on_stop,
        **options,
    )
