"""Context under hostile use: memory refuses what is not text, KeepLastTurns never overflows silently, a summariser that raises is a ModelError."""

from __future__ import annotations

import pytest

import agentnb as an
from agentnb.models import FunctionModel, ScriptedModel


def test_memory_refuses_what_is_not_text(tmp_path):
    memory = an.Memory(an.SQLiteStore(tmp_path / "m.db"), user="bob")
    for bad in (None, 5, "  "):
        with pytest.raises(an.ConfigurationError, match="non-empty string"):
            memory.remember(bad)  # type: ignore[arg-type]


def test_keep_last_turns_respects_the_window_and_an_overflow_is_never_silent():
    session = an.Session()
    for _ in range(5):
        session.append({"role": "user", "content": "q" + "w" * 800})
        session.append({"role": "assistant", "content": "a" * 800})
    agent = an.Agent("x", model=ScriptedModel(["ok", "ok"]), context_window=600, reply_reserve=100,
                     context=an.KeepLastTurns(3))  # fmt: skip
    event = agent.run_sync("last?", session=session).trace.of_type(an.events.RequestAssembled)[0]
    assert event.budget["total"] <= 500 and "fit the window" in event.note
    huge = an.Agent("x", model=ScriptedModel(["ok"]), context_window=300, reply_reserve=50)
    event = huge.run_sync("z" * 4000).trace.of_type(an.events.RequestAssembled)[0]
    assert event.budget["available"] < 0 and "over the window" in event.note
    with pytest.raises(an.ConfigurationError):
        an.KeepLastTurns(0)


def test_a_summariser_model_that_raises_is_a_model_error():
    summariser = an.ModelSummariser(FunctionModel(lambda request: 1 / 0))
    session = an.Session([{"role": "user", "content": "话" * 200} for _ in range(20)])
    agent = an.Agent("x", model=ScriptedModel(["ok"]), context_window=800, reply_reserve=100,
                     context=an.SummariseOldest(summariser))  # fmt: skip
    with pytest.raises(an.ModelCallFailed, match="summariser's model"):
        agent.run_sync("final", session=session)
    assert session.lock.holder is None
