"""A sweep's key (agentnb.evals.identity): what a variant and a task are, the same in every
process, and different when their code is (found by the hostile test: a sweep on the service
took the runs of an edited tool or check as current)."""

from __future__ import annotations

import subprocess
import sys
from typing import Annotated

from pydantic import Field

import agentnb as an
from agentnb.evals.identity import stable_identity
from agentnb.evals.sweep import sweep_key, variant_digest

KEY = """
import agentnb as an
from agentnb.evals.sweep import sweep_key, variant_digest
print(sweep_key(an.travel.task_set(), 3, 7), variant_digest(an.travel.travel_agent()))
"""


def _task(check):
    return an.TaskSet([an.Task("w1", "北京周五天气怎么样？", [check])], name="wx")


def test_the_key_is_the_same_in_every_process():
    here = f"{sweep_key(an.travel.task_set(), 3, 7)} {variant_digest(an.travel.travel_agent())}"
    run = [sys.executable, "-c", KEY]
    runs = [subprocess.run(run, capture_output=True, text=True, check=True) for _ in range(2)]
    assert {r.stdout.strip() for r in runs} == {here}


def test_an_edited_check_or_another_lambda_is_another_sweep():

    def mentions(result):
        return "晴" in (result.output or "")

    first = mentions

    def mentions(result):  # edited in the notebook, under the same name
        return "暴雨" in (result.output or "")

    keys = {
        sweep_key(_task(check), 1, 0)
        for check in (first, mentions, lambda r: True, lambda r: False)
    }
    assert len(keys) == 4
    assert sweep_key(_task(first), 1, 0) == sweep_key(_task(first), 1, 0)


def test_a_tool_or_model_function_changed_under_its_name_is_another_variant():
    def sunny(city: str) -> str:
        return "晴"

    def stormy(city: str) -> str:
        return "暴雨"

    sunny.__name__ = stormy.__name__ = "search_weather"
    base = an.travel.travel_agent()
    digests = set()
    for fn in (sunny, stormy):
        agent = base.copy()
        agent.tools.remove("search_weather")
        agent.tools.add(an.Tool(fn, name="search_weather", description="天气"))
        digests.add(variant_digest(agent))
    assert len(digests) == 2

    def reply(request):
        return {"role": "assistant", "content": "a"}

    def other(request):
        return {"role": "assistant", "content": "b"}

    models = [an.models.FunctionModel(f) for f in (reply, other)]
    assert len({variant_digest(an.Agent("x", [], model=m)) for m in models}) == 2


def test_plain_data_is_itself_and_objects_keep_no_process_identity():
    from agentnb._secrets import Secrets

    class Desk:
        def __init__(self):
            self.faults = {"search_weather": "timeout"}
            self._cache = object()  # private: left out
            self.api_key = "sk-secret-0123"  # a credential: its value masked
            self.secrets = Secrets([self.api_key])  # ... as registered

    desk = stable_identity(Desk())
    assert desk["faults"] == {"search_weather": "timeout"}
    assert "_cache" not in desk and desk["api_key"] == "***" and "sk-secret" not in repr(desk)
    assert "0x" not in repr(stable_identity([Desk(), object(), {1, 2}]))


def test_a_variant_edited_in_a_list_parameter_or_a_tool_schema_is_another_variant():
    """The digest kept only scalar model_params and each tool's description and code: a
    sweep on the service served an edited {"stop": [...]} or an edited schema its old runs
    (M1). Parameters of any shape and every tool's schema as the model sees it count."""
    base = an.travel.travel_agent()
    stops = [base.copy(model_params={"stop": [s]}) for s in ("。", "!")]
    assert variant_digest(stops[0]) != variant_digest(stops[1])
    formats = [
        base.copy(model_params={"response_format": {"type": "json_schema", "json_schema": {
            "name": "r", "schema": {"properties": {"a": {"type": kind}}}}}})
        for kind in ("string", "integer")
    ]  # fmt: skip
    assert variant_digest(formats[0]) != variant_digest(formats[1])

    def lookup(city: str) -> str:
        """Look a city up."""
        return city

    def lookup_described(city: Annotated[str, Field(description="a city, in Chinese")]) -> str:
        """Look a city up."""
        return city

    lookup_described.__code__ = lookup.__code__  # the same code; only the schema differs
    tools = [an.tool(lookup, name="lookup"), an.tool(lookup_described, name="lookup")]
    assert tools[0].schema != tools[1].schema and tools[0].description == tools[1].description
    agents = [an.Agent(model=an.travel.TravelModel(), tools=[t]) for t in tools]
    assert variant_digest(agents[0]) != variant_digest(agents[1])
    assert variant_digest(agents[0]) == variant_digest(an.Agent(model=an.travel.TravelModel(),
                                                                tools=[tools[0]]))  # fmt: skip


def test_code_is_hashed_in_one_place_with_a_version_that_ignores_reference_counts():
    # marshal >= 3 writes back-references by the objects' reference counts: the same code
    # hashed two ways as a process went on (the response cache missed its own replies).
    from pathlib import Path

    import agentnb as an

    sites = [
        f"{path.name}:{n}"
        for path in Path(an.__file__).parent.rglob("*.py")
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if "marshal.dumps(" in line
    ]
    assert len(sites) == 1 and sites[0].startswith("identity.py:"), sites
    source = (Path(an.__file__).parent / "evals" / "identity.py").read_text(encoding="utf-8")
    assert "marshal.dumps(code, 2)" in source
