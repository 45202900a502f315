"""The phrasing set (data/travel/phrasings.jsonl): how the embedded model reads ordinary
requests, each with the tool calls it must make or the question it must ask (issue #8)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import agentnb as an
from agentnb.travel import travel_agent

PATH = Path(__file__).resolve().parents[2] / "data" / "travel" / "phrasings.jsonl"
ROWS = [json.loads(line) for line in PATH.read_text(encoding="utf-8").splitlines() if line]


def test_the_package_helper_reads_the_same_set():
    frame = an.travel.phrasings()
    assert frame["id"].tolist() == [r["id"] for r in ROWS]
    assert frame.loc[0, "calls"] == ROWS[0]["calls"]


def test_the_set_is_large_and_covers_every_topic_in_both_languages():
    assert len(ROWS) >= 80 and len({r["id"] for r in ROWS}) == len(ROWS)
    topics = {r["topic"] for r in ROWS}
    assert topics == {"dates", "budget", "compare", "follow_up", "unknown_city", "nonsense",
                      "everyday"}  # fmt: skip
    for topic in topics:
        assert {r["lang"] for r in ROWS if r["topic"] == topic} == {"zh", "en"}, topic
    texts = " ".join(r["text"] for r in ROWS)
    for phrase in ("下个月15号", "周日", "后天", "1月20日", "哪个更冷", "预算3000"):
        assert phrase in texts, phrase
    assert sum(bool(r["ask"]) for r in ROWS) >= 5 and sum(bool(r["history"]) for r in ROWS) >= 5


@pytest.mark.parametrize("row", ROWS, ids=[r["id"] for r in ROWS])
async def test_phrasing(row):
    agent, session = travel_agent(), an.Session()
    for earlier in row["history"]:
        await agent.run(earlier, session=session)
    result = await agent.run(row["text"], session=session)
    made = [(c.function.name, json.loads(c.function.arguments)) for c in result.tool_calls]
    expected = row["calls"]
    assert [name for name, _ in made] == [c["tool"] for c in expected], made
    for (_, args), want in zip(made, expected, strict=True):
        assert {k: args.get(k) for k in want["args"]} == want["args"], args
    answer = result.output
    if row["ask"]:
        assert made == [] and row["ask"] in answer and ("？" in answer or "?" in answer)
    for text in row["says"]:
        assert text in answer, answer
    assert result.stop_reason == "final_answer"
    if row["lang"] == "zh":  # errors reach the user in the user's language: no English words
        assert not re.findall(r"[A-Za-z]{4,}", answer), answer
