"""A tool's own fixed structure names its error in the answer (issue 42, notebook 09).

Article 000 §5.2's first layer returns ``{"error": "上游服务超时", "fallback": []}`` instead of
raising. The stand-in read every such error as the generic 上游服务出错, so the answer said
出错 where the tool said 超时. It now names the error the tool reported; failures the runtime
marked with a kind, and tools' own codes, keep their reasons.
"""

from __future__ import annotations

import agentnb as an
from agentnb.travel.model.failures import REASONS, reason_of
from agentnb.travel.model.observations import Observation


def _agent_whose_weather_says(error: str) -> an.Agent:
    async def search_weather(city: str, date: str) -> dict:
        """查询城市在某天的天气。

        Args:
            city: 城市名，如 北京
            date: 日期，YYYY-MM-DD，或 周五、明天 等相对日期
        """
        return {"error": error, "fallback": []}

    agent = an.travel.travel_agent()
    agent.tools.remove("search_weather")
    agent.tools.add(an.Tool(search_weather))
    return agent


async def test_the_answer_names_the_error_the_tool_reported():
    result = await _agent_whose_weather_says("上游服务超时").run(an.travel.ARTICLE_REQUESTS["000"])
    weather = next(line for line in result.output.splitlines() if line.startswith("天气"))
    assert (
        weather
        == "天气：暂时无法获取（工具报告：上游服务超时）。请稍后再试，以下建议基于其余信息。"
    )
    assert "上游服务出错" not in result.output


def test_kinds_and_codes_keep_their_reasons():
    marked = Observation.read(
        "search_weather", "{}", '{"ok": false, "kind": "timeout", "error": "x"}'
    )
    coded = Observation.read(
        "search_weather",
        "{}",
        '{"ok": false, "kind": "tool_error", "code": "rate_limited", "error": "x"}',
    )
    own = Observation.read("search_weather", "{}", '{"error": "upstream down", "fallback": []}')
    assert reason_of(marked) == REASONS["timeout"] and reason_of(coded) == REASONS["rate_limited"]
    assert reason_of(own) == ("工具报告：upstream down", "the tool reported: upstream down")


def test_a_long_own_error_falls_back_to_the_generic_reason():
    own = Observation.read("search_weather", "{}", '{"error": "' + "x" * 41 + '"}')
    assert own.kind == "failed" and reason_of(own) == REASONS["tool_error"]
