"""Agent(output_type=...): the schema on every request, the answer validated into
result.value, an invalid answer corrected within output_retries, then invalid_output."""

from __future__ import annotations

import pytest
from pydantic import BaseModel
from typing_extensions import TypedDict

import agentnb as an
from agentnb.errors import ConfigurationError
from agentnb.runtime.decide import output_correction
from agentnb.session.records import RunRecord


class Trip(BaseModel):
    city: str
    days: int


class TripDict(TypedDict):
    city: str
    days: int


GOOD = '{"city": "北京", "days": 2}'


async def test_a_valid_answer_is_the_value_and_the_text_stays_the_output():
    session = an.Session()
    agent = an.Agent("plan", model=an.models.ScriptedModel([GOOD]), output_type=Trip)
    result = await agent.run("a trip", session=session)
    assert result.stop_reason == "final_answer"
    assert result.value == Trip(city="北京", days=2) and result.output == GOOD
    assert session.runs[-1].value is result.value  # the record is the one home
    request = session.requests[-1].request
    assert request.output is agent.output.spec
    assert request.to_openai()["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "Trip", "schema": agent.output.spec.schema, "strict": True},
    }
    decided = [e for e in result.events if e.type == "Decided"][-1]
    assert decided.output == {"name": "Trip", "strict": True, "attempt": 1, "attempts": 3,
                              "valid": True, "error": ""}  # fmt: skip


async def test_an_invalid_answer_gets_a_correction_in_the_transcript_then_passes():
    session = an.Session()
    model = an.models.ScriptedModel(["Beijing, two days", '{"city": "北京", "days": "two"}', GOOD])
    agent = an.Agent("plan", model=model, output_type=Trip)
    result = await agent.run("a trip", session=session)
    assert result.stop_reason == "final_answer" and result.value == Trip(city="北京", days=2)
    roles = [(m.role, getattr(m, "name", None)) for m in session.messages]
    assert roles == [("user", None), ("assistant", None), ("user", "agentnb"),
                     ("assistant", None), ("user", "agentnb"), ("assistant", None)]  # fmt: skip
    first, second = session.messages[2].text, session.messages[4].text
    assert first.startswith("Your answer was not valid because it is not JSON")
    assert "days: Input should be a valid integer" in second
    decided = [e for e in result.events if e.type == "Decided"]
    assert [d.decision for d in decided] == ["correction", "correction", "final_answer"]
    assert [d.output["attempt"] for d in decided] == [1, 2, 3]
    assert decided[0].problems[0].startswith("invalid final answer (attempt 1 of 3): it is not")


async def test_past_the_retry_limit_the_run_stops_with_invalid_output():
    agent = an.Agent("plan", model=an.models.ScriptedModel(["no", "still no"]), output_type=Trip,
                     output_retries=1)  # fmt: skip
    result = await agent.run("a trip")
    assert result.stop_reason == "invalid_output"
    assert result.value is None and result.output == "still no"
    assert result.stop_detail.startswith("the final answer failed the output type 2 times")
    assert "attempt 2 of 2" in result.stop_detail


async def test_no_retries_stops_at_the_first_invalid_answer():
    agent = an.Agent("p", model=an.models.ScriptedModel(["no"]), output_type=Trip,
                     output_retries=0)  # fmt: skip
    assert (await agent.run("x")).stop_reason == "invalid_output"


@pytest.mark.parametrize("target", [TripDict, Trip.model_json_schema()])
async def test_a_typed_dict_or_a_json_schema_is_an_output_type_too(target):
    agent = an.Agent("p", model=an.models.ScriptedModel(['{"city": 1}', GOOD]), output_type=target)
    result = await agent.run("x")
    assert result.value == {"city": "北京", "days": 2}
    problem = next(e for e in result.events if e.type == "Decided").problems[0]
    assert "city" in problem


async def test_the_value_is_written_to_plain_data_and_read_back():
    agent = an.Agent("p", model=an.models.ScriptedModel([GOOD]), output_type=Trip)
    session = an.Session()
    await agent.run("x", session=session)
    data = session.runs[-1].to_dict()
    assert data["value"] == {"city": "北京", "days": 2}
    assert RunRecord.from_dict(data).value == {"city": "北京", "days": 2}


async def test_streamed_runs_check_the_assembled_answer():
    model = an.models.ScriptedModel(["nope", GOOD])
    model.streaming = True
    agent = an.Agent("p", model=model, output_type=Trip)
    result = await agent.run("x")
    assert result.value == Trip(city="北京", days=2) and result.iterations == 2


def test_the_settings_are_checked_where_they_are_set():
    with pytest.raises(ConfigurationError, match=r"output_type: .* is not a type pydantic"):
        an.Agent(output_type=object())
    with pytest.raises(ConfigurationError, match="output_retries must be a whole number"):
        an.Agent(output_type=Trip, output_retries=-1)
    with pytest.raises(ConfigurationError, match="cannot set response_format"):
        an.Agent(output_type=Trip, model_params={"response_format": {"type": "json_object"}})
    agent = an.Agent(output_type=Trip)
    assert agent.copy().output.spec == agent.output.spec
    assert agent.copy(output_type=None).output is None


def test_the_correction_says_why_and_what_to_do():
    assert output_correction("Trip", "days: missing") == (
        "Your answer was not valid because days: missing. Answer again with only a JSON object "
        "that matches the Trip schema of the response format, no other text."
    )


def test_a_request_read_off_the_wire_gets_its_spec_back():
    spec = an.models.OutputType(Trip).spec
    chat = an.models.ModelRequest([], params={"response_format": spec.chat(), "temperature": 0})
    assert chat.output == an.models.OutputSpec("Trip", spec.schema, True)
    assert chat.params == {"response_format": spec.chat(), "temperature": 0}  # as sent
    assert chat.to_openai()["response_format"] == spec.chat()
    responses = an.models.ModelRequest([], params={"text": {"format": spec.responses()}})
    assert responses.output == chat.output
    plain = an.models.ModelRequest([], params={"response_format": {"type": "json_object"}})
    assert plain.output is None and plain.params["response_format"] == {"type": "json_object"}


async def test_the_answer_format_is_counted_in_every_request_s_budget():
    session = an.Session()
    agent = an.Agent("plan", model=an.models.ScriptedModel([GOOD]), output_type=Trip,
                     context_window=4000)  # fmt: skip
    await agent.run("a trip", session=session)
    budget = session.requests[-1].budget
    counted = agent.tokenizer.count_json(agent.output.spec.schema)
    assert budget["output"] == counted > 0
    assert budget["total"] == budget["instructions"] + budget["tools"] + counted + budget["history"]
    assert budget["available"] == 4000 - 1000 - budget["total"]


def test_a_request_diff_says_the_answer_format_changed():
    spec = an.models.OutputType(Trip).spec
    before = an.models.ModelRequest([{"role": "user", "content": "x"}])
    after = an.models.ModelRequest([{"role": "user", "content": "x"}], output=spec)
    assert before.diff(after).params_changed == {"output": (None, spec)}
    assert before != after and after == an.models.ModelRequest(list(after.messages), output=spec)
