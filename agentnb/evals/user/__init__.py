"""The simulated user: the other side of a conversation, for multi-turn evaluation.

    user = an.User("周五上海到北京的航班", facts={"date": "周五"}, seed=0)
    an.Task("which-day", "上海到北京的航班", checks=[an.checks.goal_reached()], user=user)
    conversation = an.evals.Conversation(agent, user, "上海到北京的航班")
    await conversation.finish()                 # or step() by step, the user's turn a stage

Modules, one concept each: ``user`` (:class:`User`: goal, facts, knobs; its opening and
replies), ``reading`` (how it reads an answer: questions and their slots, a proposal,
contradictions with its facts), ``cues`` (what it reads and says, as data, zh and en),
``rules`` (``User.rules()``: every rule, as a table), ``slips`` (its seeded slips: the same
seed, the same conversation in every process), ``played`` (a user played by a model, through
the same interface), ``turn`` (:class:`UserTurn`: what it said and why, recorded on the run it
starts; :class:`UserReplied`, the event that announces it).
"""

from .played import DONE, GIVE_UP
from .rules import RULES
from .slips import SLIPS
from .turn import BY, UserReplied, UserTurn
from .user import User

__all__ = ["BY", "DONE", "GIVE_UP", "RULES", "SLIPS", "User", "UserReplied", "UserTurn"]
