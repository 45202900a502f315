"""The Tokenizer seam: the documented heuristic, calibration from usage, a model's own tokenizer."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

import agentnb as an
from agentnb.models import ScriptedModel


class CharTokenizer:
    name = "chars"

    def count(self, text: str | None) -> int:
        return len(text or "")

    def count_message(self, wire: Any) -> int:
        return len(str(wire.get("content") or ""))

    def count_json(self, value: Any) -> int:
        return 1000


async def test_budgets_count_through_the_agents_tokenizer(tools):
    agent = an.Agent("1234567890", tools, model=ScriptedModel(["ok"]), tokenizer=CharTokenizer())
    result = await agent.run("abc")
    budget = result.trace.of_type(an.events.RequestAssembled)[0].budget
    assert budget == {"instructions": 10, "tools": 1000, "history": 3, "total": 1013}


async def test_a_model_may_bring_its_own_tokenizer(tools):
    model = ScriptedModel(["ok"])
    model.tokenizer = CharTokenizer()  # type: ignore[attr-defined]
    agent = an.Agent("12345", tools, model=model)
    assert agent.tokenizer is model.tokenizer  # type: ignore[attr-defined]
    assert agent.instructions_tokens() == 5
    assert an.Agent("12345").tokenizer.name == "heuristic"


def test_the_heuristic_counts_latin_and_cjk_and_calibrates():
    heuristic = an.HeuristicTokenizer()
    assert heuristic.count("abcdefgh") == 2 and heuristic.count("北京上海") == 2
    assert heuristic.count_message({"role": "user", "content": "abcd"}) == 5  # +4 overhead
    doubled = an.HeuristicTokenizer.calibrated(estimated=100, reported=200)
    assert doubled.count("abcdefgh") == 4


async def test_the_heuristic_calibrates_from_reported_usage():
    reply = {
        "choices": [{"message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 60, "completion_tokens": 1, "total_tokens": 61},
    }
    result = await an.Agent("sys " * 10, model=ScriptedModel([reply])).run("hello " * 20)
    estimated = result.trace.of_type(an.events.RequestAssembled)[0].budget["total"]
    tokenizer = result.trace.calibrated_tokenizer()
    assert tokenizer.scale == pytest.approx(60 / estimated)
    assert an.Trace([]).calibrated_tokenizer().scale == 1.0  # no reported usage: unchanged


# -- content_text: the one rule everyone reads a message's text by ----------------------------
#: Modules that join content parts' texts themselves, each with its reason (the rest call
#: agentnb.tokens.content_text, re-exported as agentnb.messages.content_text).
OWN_TEXT_RULE = {
    "tokens.py": "the rule itself",
    "tools/mcp.py": "an MCP tool result's text blocks, one a line: MCP's format, not a message",
}
_JOINS_TEXTS = re.compile(r"""join\(\s*(str\()?\w+(\.get\(["']text["']|\[["']text["']\])""")


def own_text_rules(sources: dict[str, str]) -> dict[str, list[int]]:
    """file -> lines that join the ``text`` of content parts (a copy of the rule)."""
    found: dict[str, list[int]] = {}
    for name, source in sources.items():
        for n, line in enumerate(source.splitlines(), 1):
            if _JOINS_TEXTS.search(line):
                found.setdefault(name, []).append(n)
    return found


def test_every_module_reads_text_by_the_one_rule():
    package = Path(an.__file__).parent
    sources = {
        str(p.relative_to(package)): p.read_text(encoding="utf-8") for p in package.rglob("*.py")
    }
    found = own_text_rules(sources)
    copies = {name: lines for name, lines in found.items() if name not in OWN_TEXT_RULE}
    assert not copies, f"content_text written again (call agentnb.tokens.content_text): {copies}"
    stale = set(OWN_TEXT_RULE) - set(found)
    assert not stale, f"OWN_TEXT_RULE lists {stale}, which no longer need it"


def test_the_text_rule_check_catches_a_copy():
    copy = 'def f(c):\n    return "".join(str(p.get("text", "")) for p in c)\n'
    also = "def g(c):\n    return ''.join(p['text'] for p in c)\n"
    assert own_text_rules({"a.py": copy, "b.py": also, "c.py": "x = 1\n"}) == {
        "a.py": [2],
        "b.py": [2],
    }
    assert an.messages.content_text([{"type": "text", "text": "a"}, {"x": 1}, "b"]) == "a"
