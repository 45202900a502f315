"""A user played by a model: ``an.User(goal, facts, model=m)``, through the same interface.

The model reads :func:`prompt` (its goal, persona and facts, and how to end) as its system
message and the conversation with the roles turned round: the agent's answers are its
``user`` messages, its own turns its ``assistant`` messages. Its reply is the user's next
turn; ``###DONE###`` ends the conversation as done, ``###GIVE UP###`` as given up (τ-bench
ends a simulated user's conversation with a marker the same way). Such a user is not
reproducible unless its model is (a stand-in, a recording, or a server that honours the seed
it is sent), and it cannot say which rule made it say what it said: ``turn.rule`` is
``"model"``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ...errors import ConfigurationError
from ...messages import content_text
from ...models import ModelRequest
from .answering import language_of, utter
from .reading import forms
from .slips import draw
from .turn import UserTurn, digest

if TYPE_CHECKING:
    from .user import User

__all__ = ["DONE", "GIVE_UP", "Unkept", "model_reply", "prompt"]

DONE = "###DONE###"
GIVE_UP = "###GIVE UP###"
_LANGUAGES = {"zh": "Chinese", "en": "English"}


class Unkept:
    """The model of a user read back from a file (a model is never saved): it refuses to
    play, naming the model it stands for, so a loaded task never silently plays by the rules."""

    def __init__(self, name: str) -> None:
        self.name = name

    async def complete(self, request: Any) -> Any:
        raise ConfigurationError(
            f"this user was played by the model {self.name!r}, which a saved task does not keep: "
            "give it one (task.user.model = model) before running it again"
        )


def prompt(user: User, language: str) -> str:
    """The system message of a model-played user: goal, persona, facts and how to end."""
    facts = "\n".join(f"- {k}: {forms(v)[0]}" for k, v in user.facts.items()) or "- (none)"
    persona = f"\nYour persona: {user.persona}" if user.persona else ""
    changes = "".join(
        f"\nAt your turn {k}, change your mind: "
        + ", ".join(f"{slot} is now {value}" for slot, value in c.items())
        for k, c in sorted(user.changes.items())
    )
    return (
        "You play a user talking to a travel assistant. You are the user, not the assistant: "
        "never answer as the assistant.\n"
        f"Your goal: {user.goal}{persona}\n"
        "What you know (use only these facts; when asked anything else, say you don't know):\n"
        f"{facts}{changes}\n"
        f"Write only your next message to the assistant, in {_LANGUAGES.get(language, language)}, "
        "in one or two short sentences. "
        f"When your goal is reached, reply with {DONE}. If the assistant cannot help you, reply "
        f"with {GIVE_UP}."
    )


async def model_reply(user: User, answers: Sequence[str], earlier: Sequence[UserTurn]) -> UserTurn:
    """The model's next turn of ``user`` (see the module docstring)."""
    turn = len(earlier)
    language = user.language or language_of(earlier[0].text if earlier else user.goal)
    messages: list[dict[str, Any]] = [{"role": "system", "content": prompt(user, language)}]
    for i, said in enumerate(earlier):
        messages.append({"role": "assistant", "content": said.text})
        if i < len(answers):
            messages.append({"role": "user", "content": answers[i]})
    model, params = user.model, {}
    seed = int(draw(user.seed, "model", turn) * 2**31)
    reseed = getattr(model, "with_seed", None)
    if callable(reseed):
        model = reseed(seed)
    else:
        params["seed"] = seed
    response = await model.complete(ModelRequest(messages, params=params))
    text = content_text(response.message.content).strip()
    done, gave_up = DONE in text, GIVE_UP in text
    said_text = text.replace(DONE, "").replace(GIVE_UP, "").strip()
    why = f"{getattr(model, 'name', type(model).__name__)} replied to its prompt (seed {seed})"
    unread: tuple[str, ...] = ()
    if not text:
        gave_up, unread = True, ("the model gave no reply",)
        why += "; an empty reply ends the conversation as given up"
    if done and not said_text:
        said_text = utter("done", language)
    return UserTurn(turn, said_text or text, "model", "model", why, unread,
                    patience=earlier[-1].patience if earlier else user.patience,
                    done=done and not gave_up, gave_up=gave_up,
                    replied_to=digest(answers[-1] if answers else ""))  # fmt: skip
