"""The run record is the one home of a run's outcome: tags, live usage, cache and meter counts,
its duration, and the one place run and trace ids are made."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import agentnb as an
from agentnb.models import FunctionModel, ScriptedModel
from agentnb.models.base import ModelResponse, Usage
from agentnb.session import new_run_id, new_trace_id
from tests.helpers import call, calls

PACKAGE = Path(an.__file__).parent


@an.tool
def search_weather(city: str, date: str) -> dict[str, str]:
    """Weather for a city on a date."""
    return {"city": city, "date": date, "weather": "晴"}


async def test_tags_are_kept_on_the_record_and_refused_when_not_text():
    agent = an.Agent("", [search_weather], model=ScriptedModel(["好的", "再见"]))
    session = an.Session()
    await agent.run("你好", session=session, tags={"variant": "a", "task": "t1"})
    assert session.runs[-1].tags == {"variant": "a", "task": "t1"}
    run = agent.start("再来", session=session, tags={"repeat": "0"})
    await run.finish()
    assert session.runs[-1].tags == {"repeat": "0"} and session.runs[0].tags["variant"] == "a"
    for bad in ({"repeat": 0}, {"": "x"}, ["variant"]):
        with pytest.raises(an.ConfigurationError, match="tags"):
            agent.run("x", session=an.Session(), tags=bad)  # type: ignore[arg-type]


async def test_usage_is_live_on_the_record_during_the_run():
    seen: list[int] = []
    session = an.Session()

    def reply(request):
        seen.append(session.runs[-1].usage.total_tokens)  # what a view would read mid-run
        if len(seen) < 3:
            return ModelResponse(
                an.AssistantMessage.model_validate(
                    calls(call(f"c{len(seen)}", "search_weather", city="北京", date="周五"))
                ),
                Usage(100, 10, 110),
            )
        return ModelResponse(an.AssistantMessage(content="晴"), Usage(100, 5, 105))

    agent = an.Agent("", [search_weather], model=FunctionModel(reply))
    result = await agent.run("北京天气", session=session)
    assert seen == [0, 110, 220]
    record = session.runs[-1]
    assert record.usage == Usage(300, 25, 325) == result.usage
    assert record.unmetered == 0 and record.cached_calls == 0 and record.billed == record.usage
    assert record.model == agent.model.name
    assert 0 < record.latency < 60


async def test_calls_without_usage_are_counted_unmetered_and_cache_hits_are_not_billed():
    replies = iter(
        [
            ModelResponse(
                an.AssistantMessage.model_validate(
                    calls(call("c", "search_weather", city="北京", date="周五"))
                ),
                Usage(50, 5, 55),
                cached=True,
            ),
            ModelResponse(an.AssistantMessage(content="晴")),  # no usage: estimated, unmetered
        ]
    )
    session = an.Session()
    await an.Agent("", [search_weather], model=FunctionModel(lambda r: next(replies))).run(
        "北京天气", session=session
    )
    record = session.runs[-1]
    assert record.cached_calls == 1 and record.cached == Usage(50, 5, 55)
    assert record.unmetered == 1 and record.usage.estimated
    billed = record.billed
    assert billed.prompt_tokens == record.usage.prompt_tokens - 50
    assert billed.completion_tokens == record.usage.completion_tokens - 5


def test_ids_have_one_shape():
    assert re.fullmatch(r"r-[0-9a-f]{12}", new_run_id())
    assert re.fullmatch(r"[0-9a-f]{32}", new_trace_id())
    assert len({new_run_id() for _ in range(1000)}) == 1000


def test_run_and_trace_ids_are_minted_in_one_place():
    # A second writer of ids would be random bytes turned into an id outside session/ids.py.
    minting = re.compile(r"(urandom|token_hex|uuid4)\((6|16)?\)")
    elsewhere = [
        f"{path.relative_to(PACKAGE)}:{n}"
        for path in PACKAGE.rglob("*.py")
        if path.name != "ids.py" or path.parent.name != "session"
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if minting.search(line) and ("trace" in line or '"r-' in line or '"p-' in line)
    ]
    assert elsewhere == [], f"run or trace ids made outside agentnb/session/ids.py: {elsewhere}"


async def test_a_record_reads_back_from_its_dict_as_a_store_keeps_it():
    cache_hit = ModelResponse(an.AssistantMessage(content="晴"), Usage(50, 5, 55), cached=True)
    agent = an.Agent("", [], model=ScriptedModel([cache_hit]))
    session = an.Session()
    await agent.run("北京天气", session=session, tags={"variant": "a", "repeat": "0"})
    record = session.runs[-1]
    record.annotations = {"note": {"seen": True}}
    data = record.to_dict()
    assert data["usage"] == {"prompt_tokens": 50, "completion_tokens": 5, "total_tokens": 55}
    back = an.session.RunRecord.from_dict(data)
    assert back == record and back.billed == Usage() and back.tags == record.tags
    with pytest.raises(an.ConfigurationError, match="not a run record"):
        an.session.RunRecord.from_dict({"run_id": "r-1"})
    with pytest.raises(an.ConfigurationError, match="tags"):
        an.session.RunRecord.from_dict({**data, "tags": {"repeat": 0}})
