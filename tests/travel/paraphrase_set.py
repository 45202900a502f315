"""The paraphrase set (``data/travel/paraphrases.jsonl``, issue 25): instruction lines and user
requests written apart from the lexicon, and how the stand-in's reading of each is judged.

Each row ends in one of four outcomes:

* ``followed``: the knobs (or request slots) it expects, and nothing else set;
* ``honest``: not read, and said so (the line is listed as not understood; a request slot is
  listed in the request's ``unread`` or asked about) — also the right outcome for a row that
  means nothing the stand-in can do (``kind: unreadable``);
* ``silent``: not read, and not said;
* ``misread``: read as something else (a wrong value, or a knob the row does not set).

``python -m tests.travel.paraphrase_set`` prints the counts (the figures of the note).
"""

from __future__ import annotations

import json
from collections import Counter
from datetime import date
from pathlib import Path
from typing import Any

from agentnb.models.request import ModelRequest
from agentnb.travel import TravelModel, resolve_date, travel_agent

DATA = Path(__file__).resolve().parents[2] / "data" / "travel"
PATH = DATA / "paraphrases.jsonl"
HELDOUT = DATA / "paraphrases_heldout.jsonl"


def _load(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


#: The set written before the reading was extended, and the one written after (held out).
ROWS: list[dict[str, Any]] = _load(PATH)
HELD_OUT: list[dict[str, Any]] = _load(HELDOUT)
TODAY = date(2025, 1, 6)
OUTCOMES = ("followed", "honest", "silent", "misread")
_MODEL = TravelModel()


def _same(knob: str, got: Any, want: Any) -> bool:
    if isinstance(want, list):
        return tuple(got) == tuple(want) if isinstance(got, tuple | list) else False
    return bool(got == want)


def judge_line(row: dict[str, Any]) -> tuple[str, str]:
    """(outcome, why) for an instruction row."""
    table = _MODEL.understood(row["text"])
    policy, expect = table.policy, row["expect"]
    reported = any(line for line, _ in policy.not_understood)
    values = policy.values()
    unexpected = sorted(set(policy.set_by) - set(expect))
    if not expect:  # nothing the stand-in can do: the right reading is "not understood"
        if unexpected:
            return "misread", f"set {unexpected}"
        return ("honest", "") if reported else ("silent", "neither read nor reported")
    wrong = {k: values.get(k) for k, v in expect.items()
             if k in policy.set_by and not _same(k, values.get(k), v)}  # fmt: skip
    unset = [k for k in expect if k not in policy.set_by]
    if wrong or unexpected:
        return "misread", f"wrong {wrong} unexpected {[(k, values[k]) for k in unexpected]}"
    if unset:
        return ("honest", f"{unset} not read") if reported else ("silent", f"{unset} not read")
    return "followed", ""


def _tools() -> list[dict[str, Any]]:
    return travel_agent().tools.schemas()


def judge_request(row: dict[str, Any]) -> tuple[str, str]:
    """(outcome, why) for a user-request row: the slots the reading took from it."""
    turn = _MODEL.read(ModelRequest([{"role": "user", "content": row["text"]}], _tools()))
    req = turn.request
    got: dict[str, Any] = {
        "origin": req.origin, "destination": req.destination, "budget": req.budget,
        "nights": req.nights if req.nights_stated else None,
        "cities": sorted(req.mentions) if req.compare or len(req.mentions) > 2 else None,
        "asks_cheap": turn.asks_cheap or None,
    }  # fmt: skip
    try:
        got["date"] = resolve_date(req.date, TODAY).isoformat() if req.date else None
    except ValueError:
        got["date"] = None
    unread = set(getattr(req, "unread", {}) or {})
    outcome, why = "followed", []
    for slot, want in row["expect"].items():
        have = got.get(slot)
        want = sorted(want) if slot == "cities" else want
        if slot == "cities" and have is None:
            have = sorted(req.mentions) if len(req.mentions) >= 2 else None
        if have == want:
            continue
        if have is None or have is False:
            level = "honest" if slot in unread else "silent"
        else:
            level = "misread"
        why.append(f"{slot}: {have!r} (expected {want!r})")
        if OUTCOMES.index(level) > OUTCOMES.index(outcome):
            outcome = level
    return outcome, "; ".join(why)


def judge(row: dict[str, Any]) -> tuple[str, str]:
    return judge_request(row) if row["kind"] == "request" else judge_line(row)


def counts(rows: list[dict[str, Any]] | None = None) -> Counter[str]:
    return Counter(judge(r)[0] for r in rows or ROWS)


def report(rows: list[dict[str, Any]], title: str, show: bool = True) -> None:
    by_kind: dict[str, Counter[str]] = {}
    for row in rows:
        outcome, why = judge(row)
        group = row["kind"] if row["kind"] in ("unreadable", "request") else "instruction"
        by_kind.setdefault(group, Counter())[outcome] += 1
        if show and outcome != "followed" and row["kind"] != "unreadable":
            print(f"{outcome:8} {row['id']:30} {row['text']}  -- {why}")
    print(f"== {title}")
    for group, c in by_kind.items():
        print(f"{group:12} {c.total():4} rows: " + ", ".join(f"{o} {c[o]}" for o in OUTCOMES))
    readable = sum(c.total() for g, c in by_kind.items() if g != "unreadable")
    followed = sum(c["followed"] for g, c in by_kind.items() if g != "unreadable")
    print(f"followed {followed} of {readable} readable rows ({followed / readable:.1%})")


def main() -> None:
    report(ROWS, "paraphrases.jsonl (written before the reading was extended)")
    report(HELD_OUT, "paraphrases_heldout.jsonl (written after, held out)")


if __name__ == "__main__":
    main()
