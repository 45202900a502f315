"""Structured output on Anthropic Messages: the answer tool (:meth:`OutputSpec.anthropic_tool
<agentnb.models.output.OutputSpec.anthropic_tool>`), added to a request body and read back
from the reply as the assistant's final text, so the runtime validates it as any final answer
and never runs it as a tool (:class:`~agentnb.models.AnthropicModel`, whole and streamed)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from .output import OutputSpec
from .request import ModelRequest
from .response import ModelResponse, coerce_response

__all__ = ["add_answer_tool", "answered"]


def add_answer_tool(body: dict[str, Any], spec: OutputSpec) -> list[str]:
    """Anthropic structured output (:meth:`OutputSpec.anthropic_tool`): the answer tool added
    to the body's tools and the model made to call a tool: that one alone (``tool_choice``
    ``tool``) when the request has no other, else any (``any``: the agent's tools stay
    usable, the turn ends with a tool call). Extended thinking cannot force a tool: then the
    tool is offered (``auto``) and a text answer is validated all the same. A ``tool_choice``
    the request set is kept. The notes in words."""
    tool, forced = spec.anthropic_tool()
    tools = body.get("tools") or []
    if any(t.get("name") == spec.name for t in tools):
        return [f"the answer tool {spec.name!r} was not added: a tool of that name is sent"]
    body["tools"] = [*tools, tool]
    if "tool_choice" in body:
        return []
    if body.get("thinking"):
        body["tool_choice"] = {"type": "auto"}
        return [f"extended thinking cannot force a tool: the answer tool {spec.name!r} was "
                "offered (tool_choice auto), not forced"]  # fmt: skip
    body["tool_choice"] = forced if not tools else {"type": "any"}
    return []


def answered(response: ModelResponse, request: ModelRequest) -> ModelResponse:
    """The reply with the answer tool's call read back as the assistant's final text (its
    ``input`` as JSON), so the runtime validates it as any final answer and never runs it as
    a tool. Beside other tool calls it is not kept (they run; the turn goes on); text written
    before it is not kept either; both said in ``repairs``."""
    spec = request.output
    message = response.message
    if spec is None or not message.calls:
        return response
    answer = [c for c in message.calls if c.function.name == spec.name]
    if not answer:
        return response
    others = tuple(c for c in message.calls if c.function.name != spec.name)
    if others:
        message = message.model_copy(update={"tool_calls": others})
        said = (f"the answer tool {spec.name!r} was called beside other tools: its call was "
                "not kept (the other calls run first)")  # fmt: skip
        return replace(response, message=message, repairs=(*response.repairs, said))
    notes = []
    if message.text.strip():
        notes.append(f"the text written before the answer tool ({len(message.text)} chars) "
                     "was not kept")  # fmt: skip
    if len(answer) > 1:
        notes.append(f"the answer tool was called {len(answer)} times: the first was kept")
    wire = {k: v for k, v in message.wire().items() if k != "tool_calls"}
    message = coerce_response({**wire, "content": answer[0].function.arguments}).message
    return replace(response, message=message, finish_reason="stop",
                   repairs=(*response.repairs, *notes))  # fmt: skip
