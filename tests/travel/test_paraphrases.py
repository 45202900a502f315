"""The paraphrase set of issue 25 (data/travel/paraphrases.jsonl): written apart from the lexicon,
it measures how the stand-in generalises, not what it recalls (see paraphrase_set.py)."""

from __future__ import annotations

import csv
import re
from collections import Counter
from pathlib import Path

import pytest

from agentnb.travel.model.knobs import KNOBS

from .paraphrase_set import HELD_OUT, ROWS, judge

#: The lexicon as it was when the set was written (before issue 25 extended the reading).
BEFORE = Path(__file__).parent / "data" / "lexicon_before_25.csv"
_ROW_KNOB = {"flight_choice": "choice", "hotel_choice": "choice", "leave_out": "sections"}


def test_no_instruction_row_matches_a_cue_of_its_knob_verbatim():
    with BEFORE.open(encoding="utf-8", newline="") as f:
        lexicon = list(csv.DictReader(f))
    hits = [
        (row["id"], cue["cue"][:40])
        for row in ROWS
        if row["kind"] in ("instruction", "negation")
        for cue in lexicon
        if cue["knob"] == _ROW_KNOB.get(row["knob"], row["knob"])
        and re.search(cue["cue"], row["text"], re.I)
    ]
    assert hits == []


def test_every_knob_has_four_paraphrases_per_language_plus_negations_and_requests():
    ids = [r["id"] for r in ROWS]
    assert len(ids) == len(set(ids)) >= 250
    plain = Counter((r["knob"], r["lang"]) for r in ROWS if r["kind"] == "instruction")
    knobs = {k.name for k in KNOBS}
    assert knobs <= {knob for knob, _ in plain}, knobs - {knob for knob, _ in plain}
    for knob in {knob for knob, _ in plain}:
        for lang in ("zh", "en"):
            assert plain[(knob, lang)] >= 4, (knob, lang)
    negations = Counter(r["lang"] for r in ROWS if r["kind"] == "negation")
    assert negations["zh"] >= 15 and negations["en"] >= 15
    requests = Counter((r["knob"], r["lang"]) for r in ROWS if r["kind"] == "request")
    for topic in ("budget", "dates", "nights", "preference"):
        assert requests[(topic, "zh")] >= 2 and requests[(topic, "en")] >= 2, topic


@pytest.mark.parametrize("row", ROWS + HELD_OUT, ids=[r["id"] for r in ROWS + HELD_OUT])
def test_every_row_is_followed_or_honestly_reported_never_silently_missed(row):
    outcome, why = judge(row)
    assert outcome in ("followed", "honest"), why
    if row["kind"] == "unreadable":
        assert outcome == "honest"


@pytest.mark.parametrize("rows", [ROWS, HELD_OUT], ids=["paraphrases", "held_out"])
def test_at_least_nine_in_ten_readable_rows_are_followed(rows):
    readable = [r for r in rows if r["kind"] != "unreadable"]
    followed = [r for r in readable if judge(r)[0] == "followed"]
    assert len(followed) >= 0.9 * len(readable), (len(followed), len(readable))
