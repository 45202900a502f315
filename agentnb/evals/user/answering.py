"""The rule-based user's reply: one answer of the agent read, one turn written.

The order of :mod:`.rules`. The user is *done* when the answer holds what it wants (in its
non-question sentences), contradicts none of its facts, asks for none it holds, and no change
of mind is due. Otherwise the turn is built from parts: the change of mind (turn k), the
corrections, the answers to the slots asked (or "I don't know"), the yes to a proposal, its
goal restated when there is nothing else to say, and the facts it still holds back (unless
``only_when_asked`` keeps one). A turn that costs patience when none is left gives up instead.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .cues import ALIASES, LABELS, SAY, SLOT_SAY
from .reading import Reading, forms, mentions, read, satisfied
from .slips import draw, typo
from .turn import UserTurn, digest

if TYPE_CHECKING:
    from .user import User

__all__ = ["holder", "language_of", "rules_reply", "utter"]

Facts = Mapping[str, str | Sequence[str]]
_CJK = re.compile(r"[\u4e00-\u9fff]")
_BOOKING = re.compile(r"预订|订|book|reserv", re.I)


def language_of(text: str) -> str:
    return "zh" if _CJK.search(text) else "en"


def utter(key: str, language: str, **fields: Any) -> str:
    """The user's phrase ``key`` (:data:`.cues.SAY`) in ``language``."""
    zh, en = SAY[key]
    return (zh if language == "zh" else en).format(**fields)


def holder(slot: str, facts: Facts) -> str | None:
    """The fact that answers a question for ``slot`` (itself, else an alias), or None."""
    if slot in facts:
        return slot
    return next((a for a in ALIASES.get(slot, ()) if a in facts), None)


def saying(slot: str, value: str | Sequence[str], language: str, asked: str | None = None) -> str:
    """How the user gives a fact of ``slot`` (从上海出发, to Beijing), in the words of the
    slot it was ``asked`` for when that is another (哪个城市 → the destination)."""
    v = forms(value)[0]
    phrase = SLOT_SAY.get(asked or slot)
    if phrase is not None:
        return (phrase[0] if language == "zh" else phrase[1]).format(v=v)
    if (asked or slot) in LABELS:
        return v
    return f"{slot}{'：' if language == 'zh' else ': '}{v}"


def label(slot: str, language: str) -> str:
    zh, en = LABELS.get(slot, (slot, f"the {slot}"))
    return zh if language == "zh" else en


def typo_slip(user: User, text: str, turn: int, slips: list[str], why: str) -> tuple[str, str]:
    """The ``typo`` slip: ``text`` with one typo when the turn's draw says so."""
    if user.typo and draw(user.seed, "typo", turn) < user.typo:
        text, change = typo(text, user.seed, turn)
        if change:
            slips.append("typo")
            why += f"; the typo slip: {change}"
    return text, why


class _Reply:
    """The parts of one reply, the rules they follow and why, and what it costs."""

    def __init__(self, user: User, answer: str, earlier: Sequence[UserTurn]) -> None:
        self.user, self.answer, self.turn = user, answer, len(earlier)
        self.language = user.language or language_of(earlier[0].text if earlier else user.goal)
        self.facts = user.facts_at(self.turn)
        self.given = {k for t in earlier for k in user.facts
                      if k in t.gave or mentions(t.text, user.facts[k])}  # fmt: skip
        self.patience = earlier[-1].patience if earlier else user.patience
        self.reading: Reading = read(answer, self.facts)
        self.parts: list[str] = []
        self.rules: list[str] = []
        self.whys: list[str] = []
        self.unread = list(self.reading.unknown)
        self.gave: dict[str, str] = {}
        self.repeated: list[str] = []
        self.cost = 0

    def say(self, key: str, **fields: Any) -> str:
        return utter(key, self.language, **fields)

    def turn_of(self, text: str, rule: str, why: str, **more: Any) -> UserTurn:
        held = tuple(k for k in self.facts if k not in self.given and k not in self.gave)
        return UserTurn(self.turn, text, self.user.by, rule, why, tuple(self.unread),
                        tuple(self.reading.asked), tuple(self.repeated), dict(self.gave), held,
                        replied_to=digest(self.answer), **more)  # fmt: skip

    # -- the parts, in order ------------------------------------------------------------------
    def change_of_mind(self, changed: Mapping[str, str]) -> None:
        for slot, value in changed.items():
            self.parts.append(self.say("change", what=label(slot, self.language), v=value))
            self.gave[slot] = value
            self.whys.append(f"changes at turn {self.turn}: {slot} → {value}")
        if changed:
            self.rules.append("change_mind")

    def corrections(self, wrong: list[tuple[str, str]]) -> None:
        for slot, shown in wrong:
            value = forms(self.facts[slot])[0]
            key = "correct_place" if slot in ("city", "destination") else "correct"
            self.parts.append(self.say(key, what=label(slot, self.language), v=value))
            self.gave[slot] = value
            said = f"says {shown}" if shown else "never names it"
            self.whys.append(f"the answer contradicts my {slot} ({value}): it {said}")
        if wrong:
            self.rules.append("correct")
            self.cost = 1

    def answers(self) -> None:
        answered, unknown = [], []
        for slot in self.reading.asked:
            key = holder(slot, self.facts)
            if key is None:
                unknown.append(slot)
                self.unread.append(f"asked for {slot}: not in my facts")
                continue
            if key in self.given:
                self.repeated.append(slot)
            if key not in self.gave:
                self.parts.append(saying(key, self.facts[key], self.language, slot))
                self.gave[key] = forms(self.facts[key])[0]
                answered.append(slot)
        if answered:
            self.rules.append("answer_again" if self.repeated else "answer")
            self.whys.append(f"the answer asks for {', '.join(answered)}")
            self.cost = max(self.cost, int(bool(self.repeated)))
        reading = self.reading
        if unknown or (reading.unknown and not reading.asked and not reading.proposal):
            joint = "、" if self.language == "zh" else " or "
            what = joint.join(label(s, self.language) for s in unknown)
            self.parts.append(
                self.say("dont_know", what=what) if what else self.say("dont_know_any")
            )
            self.rules.append("dont_know")
            self.whys.append("asked what my facts do not hold: "
                             + ", ".join(unknown or reading.unknown[:1]))  # fmt: skip

    def confirm(self) -> None:
        proposal = self.reading.proposal
        act = self.say("yes_book" if _BOOKING.search(proposal) else "yes_plain")
        self.parts.append(self.say("yes", act=act))
        self.rules.append("confirm")
        self.whys.append(f"it proposes: {proposal!r}")

    def restate(self, missing: list[str]) -> None:
        self.parts.append(self.say("restate", goal=self.user.goal))
        self.rules.append("restate")
        self.cost = 1
        lacking = f"lacks {', '.join(missing)}" if missing else "says nothing"
        self.whys.append(f"the answer asks nothing and {lacking}")

    def volunteer(self) -> None:
        user = self.user
        for key in [k for k in self.facts if k not in self.given and k not in self.gave]:
            if (
                user.only_when_asked
                and draw(user.seed, "only_when_asked", key) < user.only_when_asked
            ):
                continue  # the only_when_asked slip: this fact waits for its question
            self.parts.append(saying(key, self.facts[key], self.language))
            self.gave[key] = forms(self.facts[key])[0]
            if "volunteer" not in self.rules:
                self.rules.append("volunteer")


def rules_reply(user: User, answer: str, earlier: Sequence[UserTurn]) -> UserTurn:
    """The rule-based reply of ``user`` to ``answer`` (see the module docstring)."""
    r = _Reply(user, answer, earlier)
    reading, facts = r.reading, r.facts
    changed = {k: forms(v)[0] for k, v in user.changes.get(r.turn, {}).items()}
    missing = satisfied(claims(reading), user.wants) + unheard(user, r.turn, answer)
    wrong = [c for c in reading.contradictions if c[0] not in changed]
    answerable = [s for s in reading.asked if holder(s, facts) is not None]
    asks = user.wants or not reading.questions
    if not (changed or wrong or missing or answerable) and asks and reading.text.strip():
        wanted = ", ".join(w if isinstance(w, str) else str(w[0]) for w in user.wants)
        why = "the answer contradicts none of my facts" + (
            f" and holds what I want ({wanted})" if wanted else " and asks nothing")  # fmt: skip
        return r.turn_of(r.say("done"), "done", why, patience=r.patience, done=True)
    r.change_of_mind(changed)
    r.corrections(wrong)
    r.answers()
    if reading.proposal and not wrong:
        r.confirm()
    if not r.parts:
        r.restate(missing)
    r.volunteer()
    if r.cost and r.patience - r.cost <= 0:
        why = "patience spent: " + "; ".join(r.whys)
        r.gave = {}  # nothing of this turn is said but its giving up
        return r.turn_of(r.say("give_up"), "give_up", why, patience=0, gave_up=True)
    slips: list[str] = []
    text, why = typo_slip(user, join(r.parts, r.language), r.turn, slips, "; ".join(r.whys))
    return r.turn_of(text, "+".join(r.rules), why, patience=r.patience - r.cost,
                     slips=tuple(slips))  # fmt: skip


def unheard(user: User, turn: int, answer: str) -> list[str]:
    """The changes of mind made before ``turn`` that ``answer`` does not name: the user waits
    for an answer that takes its new budget (date, ...) into account."""
    return [
        f"{slot} {value}"
        for k, change in user.changes.items()
        if k < turn
        for slot, value in change.items()
        if not mentions(answer, value)
    ]


def claims(reading: Reading) -> str:
    """The answer without its questions: what it states."""
    text = reading.text
    for q in reading.questions:
        text = text.replace(q, " ")
    return text


def join(parts: list[str], language: str) -> str:
    """The parts as one message: sentences kept, fragments joined (从上海出发，周五。)."""
    joint, end = SAY["join"][language != "zh"], SAY["end"][language != "zh"]
    out = ""
    for part in parts:
        part = part.strip()
        if not out:
            out = part
        elif out[-1] in "。.！!？?":
            out += ("" if language == "zh" else " ") + part
        else:
            out += joint + part
    if out and out[-1] not in "。.！!？?":
        out += end
    return out[:1].upper() + out[1:] if language == "en" else out
