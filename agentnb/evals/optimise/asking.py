"""The proposer asked as a run: each question is one run of its own, metered by its record.

A proposal costs one model call (:func:`.proposer.ask`). It is made as an ordinary run: an
agent whose instructions are the question's system message, with no tools, one iteration and
no wrap-up call, on a session of its own, tagged ``{"optimiser": "proposer"}``. So its record
meters it as every run is metered (tokens as the call answers, a cache's reply apart, a call
that reports no usage estimated and counted unmetered), and the optimisation's proposer
figures (``proposer_calls``, ``proposer_usage``, ``proposer_spend``) are read from those
records (``opt.proposer_runs``). The proposer receives the question as written: the system
message, then the user's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...agent import Agent
from ...errors import ConfigurationError, ModelCallFailed
from ...models import Model, ModelRequest, ModelResponse
from ...session import Session

if TYPE_CHECKING:
    from .optimisation import Optimisation

__all__ = ["TAGS", "asked"]

#: The tags of a proposer's run.
TAGS = {"optimiser": "proposer"}


class _Proposer(Model):
    """The proposer as the runtime calls a model: its ``complete`` (any agentnb model, or an
    object with an async ``complete``), never streamed."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.name = str(getattr(model, "name", type(model).__name__))
        own = getattr(model, "tokenizer", None)
        if own is not None:
            self.tokenizer = own

    async def complete(self, request: ModelRequest) -> ModelResponse:
        reply: ModelResponse = await self.model.complete(request)
        return reply


async def asked(opt: Optimisation, request: ModelRequest) -> ModelResponse:
    """The proposer's reply to ``request`` (a system message, then a user message), asked as a
    run whose record goes to ``opt.proposer_runs``. A model that raises raises here as itself
    (not wrapped), as when it was called directly."""
    messages = list(request.messages)
    if [m.get("role") for m in messages] != ["system", "user"]:
        raise ConfigurationError("a proposer's question is a system message, then a user message")
    agent = Agent(
        str(messages[0]["content"]),
        [],
        model=_Proposer(opt.proposer),
        name="proposer",
        max_iterations=1,
        model_params=dict(request.params),
    )
    run = agent.start(str(messages[1]["content"]), session=Session(), tags=TAGS)
    opt.proposer_runs.append(run.record)
    try:
        result = await run.finish()
    except ModelCallFailed as exc:  # the model's own exception, as the caller knew it
        cause = exc.__cause__
        if isinstance(cause, Exception):
            raise cause from None
        raise
    reply = next(m for m in result.messages if m.role == "assistant")
    return ModelResponse(reply)
