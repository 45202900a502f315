"""check_stop says why the loop goes on: iteration k of n, no repeat, tokens used."""

from __future__ import annotations

import agentnb as an

REQUEST = "我周五从上海去北京出差，预算3000以内"


def continues(result) -> list[str]:
    return [e.detail for e in result.trace.of_type(an.events.StopChecked) if not e.stop]


def test_each_continue_names_the_iteration_the_repeat_count_and_the_tokens():
    agent = an.travel.travel_agent()
    result = agent.run_sync(REQUEST, session=an.Session())
    details = continues(result)
    assert len(details) == result.iterations - 1
    for k, detail in enumerate(details, 1):
        assert detail.startswith(f"iteration {k} of {agent.max_iterations}, no repeated action, ")
        assert detail.endswith(" tokens used")
    events = result.trace.of_type(an.events.StopChecked)
    assert events[0].summary() == "continue: " + details[0]


def test_a_repeat_and_a_token_budget_are_counted_against_their_limits():
    agent = an.travel.travel_agent(model=an.travel.TravelModel(misbehave="loop"),
                                   repeat_limit=3, token_budget=10**6)  # fmt: skip
    result = agent.run_sync(REQUEST, session=an.Session())
    assert result.stop_reason == "repeated_action"
    details = continues(result)
    assert any("the same call 2 of 3 times" in d for d in details), details
    assert all(d.endswith(" of 1,000,000 tokens used") for d in details)
