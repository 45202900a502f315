"""Static display: assert_valid_conversation names the problem; a long session's static HTML keeps only its end."""

from __future__ import annotations

import pytest

import agentnb as an
from agentnb.testing import assert_valid_conversation
from tests.helpers import call, calls


def test_assert_valid_conversation_names_the_problem():
    assert_valid_conversation(an.Session([{"role": "user", "content": "hi"}]))
    broken = [calls(call("c1", "f", x=1)), {"role": "user", "content": "next"}]
    with pytest.raises(AssertionError, match="c1 have no tool result"):
        assert_valid_conversation(broken)
    with pytest.raises(AssertionError, match="not an OpenAI chat message"):
        assert_valid_conversation([{"role": "tool", "content": "no id"}])


def test_a_long_sessions_static_html_keeps_only_its_end():
    session = an.Session([{"role": "user", "content": f"m{i}"} for i in range(600)])
    bundle = session.static_mimebundle()
    assert "100 earlier messages not shown" in bundle["text/plain"]
    assert "#599 " in bundle["text/plain"] and "#99 " not in bundle["text/plain"]
    assert bundle["text/html"].count("m599") == 1 and "#100 user" in bundle["text/html"]
    request = an.models.ModelRequest(
        [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]
    )
    assert request.system == {"role": "system", "content": "s"}
