"""User: a simulated user, the other side of a conversation (``an.User``).

    user = an.User("周五上海到北京的航班", facts={"date": "周五"}, seed=0)
    task = an.Task("which-day", "上海到北京的航班", checks=[...], user=user)

After each final answer of the agent the user reads it and replies: it answers a question
from its ``facts``, confirms a proposal, corrects what contradicts a fact, changes its mind at
turn k, restates its goal, says it is done, or gives up once its ``patience`` is spent. With
``model=None`` it follows the rules of :mod:`.rules` (offline, deterministic, each turn naming
its rule and why; a question outside its facts gets "I don't know" and is listed in
``turn.unread``: it never invents a fact). With ``model=`` any agentnb model plays it through
the same interface (:mod:`.played`), prompted with the goal, persona and facts.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from typing import Any

from ...errors import ConfigurationError
from .answering import language_of, rules_reply, typo_slip
from .reading import forms, mentions
from .rules import rule_table
from .slips import draw, vague
from .turn import UserTurn

__all__ = ["User"]

Facts = Mapping[str, str | Sequence[str]]


def _chance(name: str, value: float) -> float:
    if not 0 <= value <= 1:
        raise ConfigurationError(f"User({name}=...) is a chance between 0 and 1, not {value!r}")
    return float(value)


class User:
    """A simulated user (see the module docstring).

    Args:
        goal: what the user wants, in its own words (it restates it when an answer does not
            help; a model user's prompt starts from it).
        facts: what it knows, slot -> value (``{"date": "周五", "budget": "3000"}``); a value
            may list other forms it recognises after the one it says (``["周五",
            "2025-01-10"]``). It never says anything else.
        persona: how it talks (a model user's prompt).
        max_turns: the agent's turns at most; then the conversation stops with ``max_turns``.
        patience: the unhelpful answers it takes (a correction, a repeated question, an
            answer without what it wants); the last one spent, it gives up.
        wants: what an answer must hold for it to be done, each a text or a list of
            alternatives (``[["预订成功", "Booked"]]``); none: any answer that asks nothing.
        changes: ``{k: {"budget": "1300"}}``: a change of mind at turn ``k``.
        vague_first, only_when_asked, typo: the chances of its slips (:mod:`.slips`).
        model: any agentnb model to play the user instead of the rules.
        seed: the slips' (and a model's) seed; an evaluation gives each run its own.
        language: ``"zh"`` or ``"en"`` (default: the opening's).
    """

    def __init__(
        self,
        goal: str,
        facts: Facts | None = None,
        *,
        persona: str = "",
        max_turns: int = 8,
        patience: int = 2,
        wants: Sequence[str | Sequence[str]] = (),
        changes: Mapping[int, Mapping[str, str]] | None = None,
        vague_first: float = 0.0,
        only_when_asked: float = 0.0,
        typo: float = 0.0,
        model: Any = None,
        seed: int = 0,
        language: str | None = None,
    ) -> None:
        if not isinstance(goal, str) or not goal.strip():
            raise ConfigurationError("a User needs a goal: what it wants, in its own words")
        if not isinstance(max_turns, int) or max_turns < 1:
            raise ConfigurationError(f"max_turns must be an int of at least 1, not {max_turns!r}")
        if not isinstance(patience, int) or patience < 1:
            raise ConfigurationError(f"patience must be an int of at least 1, not {patience!r}")
        if language not in (None, "zh", "en"):
            raise ConfigurationError(f"language must be 'zh' or 'en', not {language!r}")
        self.goal, self.persona, self.language = goal, persona, language
        self.facts: dict[str, str | list[str]] = {
            str(k): v if isinstance(v, str) else [str(f) for f in v]
            for k, v in (facts or {}).items()
        }
        self.max_turns, self.patience = max_turns, patience
        self.wants = [w if isinstance(w, str) else list(w) for w in wants]
        self.changes = {
            int(k): {str(s): str(v) for s, v in c.items()} for k, c in (changes or {}).items()
        }
        if any(k < 1 for k in self.changes):
            raise ConfigurationError("changes are keyed by the turn (1 or later) they happen at")
        self.vague_first = _chance("vague_first", vague_first)
        self.only_when_asked = _chance("only_when_asked", only_when_asked)
        self.typo = _chance("typo", typo)
        self.model, self.seed = model, int(seed)

    # -- what plays it ------------------------------------------------------------------------
    @property
    def by(self) -> str:
        return "rules" if self.model is None else "model"

    def with_seed(self, seed: int) -> User:
        """A copy with another seed (an evaluation gives each run its own)."""
        twin = copy.copy(self)
        twin.seed = int(seed)
        return twin

    def facts_at(self, turn: int) -> dict[str, str | list[str]]:
        """The facts as they stand at ``turn``: every change of mind up to it applied."""
        facts = dict(self.facts)
        for k in sorted(self.changes):
            if k <= turn:
                facts.update(self.changes[k])
        return facts

    # -- the opening ----------------------------------------------------------------------------
    def opening(self, text: str) -> UserTurn:
        """The first turn: the task's input (vaguer with the ``vague_first`` slip, and a
        typo with ``typo``)."""
        rule, why, slips = "opening", "the task's input", []
        if self.vague_first and draw(self.seed, "vague_first") < self.vague_first:
            values = [forms(v)[0] for v in self.facts.values()]
            shorter, dropped = vague(text, values)
            if dropped:
                text, rule = shorter, "opening+vague_first"
                why = f"the vague_first slip left out {', '.join(repr(d) for d in dropped)}"
                slips.append("vague_first")
        text, why = typo_slip(self, text, 0, slips, why)
        given = {k: forms(v)[0] for k, v in self.facts.items() if mentions(text, v)}
        held = tuple(k for k in self.facts if k not in given)
        return UserTurn(0, text, self.by, rule, why, gave=given, held_back=held,
                        patience=self.patience, slips=tuple(slips))  # fmt: skip

    # -- a reply -----------------------------------------------------------------------------
    async def reply(self, answers: Sequence[str], earlier: Sequence[UserTurn]) -> UserTurn:
        """The next turn, reading the agent's latest answer (``answers[-1]``; ``earlier`` are
        the turns so far, the opening first)."""
        if self.model is not None:
            from .played import model_reply

            return await model_reply(self, answers, earlier)
        return self.rules_reply(answers[-1] if answers else "", earlier)

    def rules_reply(self, answer: str, earlier: Sequence[UserTurn]) -> UserTurn:
        """The rule-based reply to ``answer`` (see :mod:`.rules` and :mod:`.answering`)."""
        return rules_reply(self, answer, earlier)

    # -- as data ----------------------------------------------------------------------------
    def describe(self) -> dict[str, Any]:
        """What the view and a saved task show of this user (a model is named, never kept)."""
        data: dict[str, Any] = {"goal": self.goal, "facts": self.facts, "by": self.by}
        data.update(seed=self.seed, max_turns=self.max_turns, patience=self.patience)
        for name in ("persona", "language"):
            if getattr(self, name):
                data[name] = getattr(self, name)
        if self.wants:
            data["wants"] = self.wants
        if self.changes:
            data["changes"] = {str(k): v for k, v in self.changes.items()}
        for name in ("vague_first", "only_when_asked", "typo"):
            if getattr(self, name):
                data[name] = getattr(self, name)
        if self.model is not None:
            data["model"] = str(getattr(self.model, "name", type(self.model).__name__))
            from .played import prompt

            data["prompt"] = prompt(self, self.language or language_of(self.goal))
        return data

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict. A model is named (``played_by``), never written (it may hold a
        key): read back, the user refuses to play until it is given one."""
        data = self.describe()
        for key in ("by", "prompt"):
            data.pop(key, None)
        if "model" in data:
            data["played_by"] = data.pop("model")
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, model: Any = None) -> User:
        """The user a :meth:`to_dict` dict describes; one a model played gets ``model``, else
        a stand-in that refuses to play, naming the model it needs (never the rules instead)."""
        fields = dict(data)
        for key in ("by", "prompt", "model"):
            fields.pop(key, None)
        played_by = fields.pop("played_by", None)
        if played_by is not None and model is None:
            from .played import Unkept

            model = Unkept(str(played_by))
        try:
            return cls(fields.pop("goal"), fields.pop("facts", None), model=model, **fields)
        except (KeyError, TypeError) as exc:
            raise ConfigurationError(f"not a user ({type(exc).__name__}: {exc})") from None

    @classmethod
    def of(cls, value: Any) -> User | None:
        """A task's user: a User, its dict (or JSON text, a DataFrame's cell) read back, or
        None; anything else is refused."""
        if value is None or isinstance(value, User):
            return value
        if isinstance(value, str) and value.strip().startswith("{"):
            value = json.loads(value)
        if isinstance(value, Mapping):
            return cls.from_dict(value)
        if isinstance(value, float) and value != value:  # NaN: an empty DataFrame cell
            return None
        raise ConfigurationError(f"user must be an an.User (a simulated user), not {value!r:.80}")

    @staticmethod
    def rules() -> Any:
        """Every rule and slip of the rule-based user (a pandas DataFrame)."""
        return rule_table()

    def __repr__(self) -> str:
        facts = ", ".join(f"{k}={forms(v)[0]!r}" for k, v in self.facts.items())
        return f"<User ({self.by}, seed {self.seed}) {self.goal[:40]!r}: {facts}>"
