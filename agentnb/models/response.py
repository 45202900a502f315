"""A model's reply: the assistant message, usage and finish reason, and the forms accepted."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from .._sdk import normalise_assistant
from ..errors import InvalidMessage, ModelResponseError
from ..messages import AssistantMessage, parse_message, reply_message, text_message

__all__ = ["NOT_SENT", "USAGE_DETAILS", "ModelResponse", "Usage", "coerce_response"]

#: What a repair about the history says when a request could not send the reasoning another
#: API wrote (``"the reasoning of 3 assistant message(s) was not sent: ..."``): a standing
#: condition of the session, the same on every call of a run, so ``decide`` reports it once
#: per run.
NOT_SENT = "assistant message(s) was not sent"

#: The parts of a call's tokens the APIs report beside the totals (0 when they do not).
USAGE_DETAILS = ("cached_tokens", "cache_write_tokens", "reasoning_tokens")


@dataclass(frozen=True, slots=True)
class Usage:
    """Token usage of one model call (or a sum). ``estimated`` when the model gave none.

    As the APIs report it: ``prompt_tokens`` counts every input token, the cached ones
    included (the OpenTelemetry GenAI convention), and of them ``cached_tokens`` were read
    from the provider's prompt cache (OpenAI ``cached_tokens``, Anthropic
    ``cache_read_input_tokens``) and ``cache_write_tokens`` written to it (Anthropic
    ``cache_creation_input_tokens``); of the ``completion_tokens``, ``reasoning_tokens`` were
    spent reasoning (OpenAI ``reasoning_tokens``). Prices may differ for each part
    (:class:`agentnb.evals.Price`).
    """

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    estimated: bool = False
    cached_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.total_tokens + other.total_tokens,
            self.estimated or other.estimated,
            self.cached_tokens + other.cached_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
            self.reasoning_tokens + other.reasoning_tokens,
        )

    def __sub__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens - other.prompt_tokens,
            self.completion_tokens - other.completion_tokens,
            self.total_tokens - other.total_tokens,
            self.estimated,
            self.cached_tokens - other.cached_tokens,
            self.cache_write_tokens - other.cache_write_tokens,
            self.reasoning_tokens - other.reasoning_tokens,
        )

    def details(self) -> dict[str, int]:
        """The parts the API reported (those above 0) by name: ``{"cached_tokens": 900}``."""
        return {k: v for k in USAGE_DETAILS if (v := getattr(self, k))}

    @classmethod
    def from_openai(cls, data: dict[str, Any] | None) -> Usage | None:
        if not data:
            return None
        if not isinstance(data, dict):
            raise ModelResponseError(f"the reply's usage is not an object: {data!r:.80}")
        prompt = _tokens(data, "prompt_tokens", 0)
        completion = _tokens(data, "completion_tokens", 0)
        total = _tokens(data, "total_tokens", prompt + completion)
        inputs, outputs = data.get("prompt_tokens_details"), data.get("completion_tokens_details")
        if not isinstance(inputs, dict) and not isinstance(outputs, dict):
            return cls(prompt, completion, total)
        cached = _tokens(inputs, "cached_tokens", 0) if isinstance(inputs, dict) else 0
        reasoning = _tokens(outputs, "reasoning_tokens", 0) if isinstance(outputs, dict) else 0
        return cls(prompt, completion, total, cached_tokens=cached, reasoning_tokens=reasoning)


def _tokens(usage: dict[str, Any], name: str, default: int) -> int:
    value = usage.get(name) or default
    try:
        return int(value)
    except (TypeError, ValueError, OverflowError):
        raise ModelResponseError(
            f"the reply's usage.{name} is not a number: {value!r:.80}"
        ) from None


@dataclass(slots=True)
class ModelResponse:
    """One reply: the assistant message plus usage, finish reason and the raw payload.

    Read only by convention, like events: one is built per model call, and a frozen dataclass
    costs four times as much to build.
    """

    message: AssistantMessage
    usage: Usage | None = None
    finish_reason: str | None = None
    model: str | None = None
    raw: dict[str, Any] | None = None
    #: What the model client repaired on the way in, in words (e.g. a tool call written as
    #: text turned into a real call). ``decide`` reports them in ``Decided.problems`` (one
    #: about the history, :data:`NOT_SENT`, once per run).
    repairs: tuple[str, ...] = ()
    #: When set, the reply was unusable: ``decide`` appends it, then this text as a correction
    #: message (``name="agentnb"``) for the model, and the loop goes on.
    correction: str | None = None
    #: True when a cache answered instead of the model (the run counts it, and never bills it).
    cached: bool = False


def coerce_response(value: Any, model: str | None = None) -> ModelResponse:
    """Accept the reply forms test doubles allow and return a :class:`ModelResponse`.

    A ``ModelResponse``; an ``AssistantMessage``; a plain string (a text answer); an
    assistant-message dict; or a whole Chat Completions response dict (``choices[0]``).
    """
    if type(value) is dict and value.get("role") == "assistant":  # the common case, first
        reply = reply_message(value) or _assistant(value)  # built at once when well formed
        return ModelResponse(reply, None, "tool_calls" if reply.tool_calls else "stop", model)
    if isinstance(value, ModelResponse):
        return value
    if isinstance(value, AssistantMessage):
        finish = "tool_calls" if value.tool_calls else "stop"
        return ModelResponse(value, None, finish, model)
    if isinstance(value, str):
        return ModelResponse(text_message(AssistantMessage, value), None, "stop", model)
    if isinstance(value, dict) and "error" in value and "choices" not in value:
        error = value["error"]
        detail = error.get("message", error) if isinstance(error, dict) else error
        kind = f" ({error.get('type') or error.get('code')})" if isinstance(error, dict) else ""
        raise ModelResponseError(f"the provider returned an error{kind}: {detail}")
    if isinstance(value, dict) and "choices" in value:
        try:
            choice = value["choices"][0]
            message = dict(choice["message"])
        except (KeyError, IndexError, TypeError):
            raise ModelResponseError(
                "the completion has no choices[0].message; got keys "
                f"{sorted(value)} (is this an error body?)"
            ) from None
        message.setdefault("role", "assistant")
        inner = coerce_response(message, model)
        return ModelResponse(
            inner.message,
            Usage.from_openai(value.get("usage")),
            choice.get("finish_reason") or inner.finish_reason,
            value.get("model") or model,
            value,
        )
    if isinstance(value, dict):
        data = value if "role" in value else {"role": "assistant", **value}
        if data.get("role") != "assistant":
            raise ModelResponseError(
                f"a model reply must be an assistant message, got role {data.get('role')!r}"
            )
        return coerce_response(_assistant(data), model)
    raise ModelResponseError(
        f"cannot use a {type(value).__name__} as a model reply; give a string, an assistant "
        "message dict, an AssistantMessage or a ModelResponse"
    )


def _assistant(data: dict[str, Any]) -> AssistantMessage:
    try:
        return AssistantMessage.model_validate(normalise_assistant(data))
    except ValidationError:
        pass
    try:  # parse again for the readable error
        parse_message(data, where="model reply")
    except InvalidMessage as exc:
        raise ModelResponseError(str(exc)) from None
    raise ModelResponseError(f"model reply {data!r} is not an assistant message")
