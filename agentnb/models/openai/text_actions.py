"""Actions written as text: turn a tool call the model typed into its reply into a real one.

Small models often write the call instead of making it (article 002 §2.4, §5.3)::

    <tool_call>{"name": "search_weather", "arguments": {"city": "北京"}}</tool_call>
    ```json {"name": "search_weather", "arguments": {...}} ```
    {"name": "search_weather", "parameters": {...}}
    search_weather(city="北京", date="2025-01-10")
    functions.search_weather: {"city": "北京"}      (chatml-function-calling's own form)

Opt-in (``OpenAIModel(text_actions=True)`` or a profile with ``text_actions=True``), and
only for a reply without real ``tool_calls`` to a request that offered tools. What parses
becomes a real tool call, and ``ModelResponse.repairs`` says so (the ``Decided`` event shows
it). A rule-based repair fills what the tool schemas make unambiguous: a missing tool name
when the arguments fit exactly one tool, a name spelt with other case or separators, the
arguments given bare, a lone string for a one-parameter tool. A text that clearly tries to
act but cannot be parsed keeps its text and gets ``correction`` ("your action was not valid
because …; answer again"), which the runtime sends back to the model. Plain prose is left
alone: it is a final answer.
"""

from __future__ import annotations

import ast
import hashlib
import html
import json
import re
from dataclasses import replace
from typing import Any

from ...messages import AssistantMessage, FunctionCall, ToolCall
from ..base import Delta, ModelResponse

__all__ = ["StreamedText", "TextAction", "apply_text_actions", "parse_text_actions"]

_TAG = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.S)
_FENCE = re.compile(r"```(?:json|tool_call|tool|javascript)?\s*\n?(.*?)```", re.S)
_FUNCTIONS = re.compile(r"functions\.([A-Za-z_][\w-]*)\s*:\s*(\{.*)", re.S)
_NAME_KEYS = ("name", "tool", "tool_name", "function", "action")
_ARG_KEYS = ("arguments", "parameters", "args", "input", "action_input")


class TextAction:
    """The outcome of parsing: ``calls`` (name, arguments dict), notes, or an ``error``."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.notes: list[str] = []
        self.error: str | None = None
        self.attempted = False


def _norm(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


class _Tools:
    def __init__(self, schemas: list[dict[str, Any]]) -> None:
        self.params: dict[str, tuple[set[str], set[str]]] = {}
        for schema in schemas:
            fn = schema.get("function", schema)
            props = (fn.get("parameters") or {}).get("properties") or {}
            required = set((fn.get("parameters") or {}).get("required") or ())
            self.params[str(fn.get("name"))] = (set(props), required)

    def resolve(self, name: str, action: TextAction) -> str | None:
        if name in self.params:
            return name
        matches = [t for t in self.params if _norm(t) == _norm(name)]
        if len(matches) == 1:
            action.notes.append(f"tool name {name!r} read as {matches[0]!r}")
            return matches[0]
        return None

    def fitting(self, args: dict[str, Any]) -> list[str]:
        keys = set(args)
        return [t for t, (props, req) in self.params.items() if req <= keys <= props and keys]


def _call_from_object(obj: Any, tools: _Tools, action: TextAction) -> None:
    if isinstance(obj, list):
        for item in obj:
            _call_from_object(item, tools, action)
        return
    if not isinstance(obj, dict):
        action.error = (
            f"the action must be a JSON object with a name and arguments, not {obj!r:.80}"
        )
        return
    if isinstance(obj.get("function"), dict):  # the OpenAI shape {"function": {...}}
        obj = obj["function"]
    name = next((obj[k] for k in _NAME_KEYS if isinstance(obj.get(k), str)), None)
    args_key = next((k for k in _ARG_KEYS if k in obj), None)
    args: Any = obj.get(args_key) if args_key else None
    if name is None and args_key is None:  # the object may be the arguments themselves
        args = obj
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except json.JSONDecodeError:
            args = {"__text__": args}
    if args is None:
        args = {}
    if name is None:
        fits = tools.fitting(args) if isinstance(args, dict) else []
        if len(fits) != 1:
            action.error = "the action names no tool" + (
                f" and its arguments fit {fits}" if fits else " and its arguments fit none"
            )
            return
        name = fits[0]
        action.notes.append(f"missing tool name filled in as {name!r} from the arguments")
    resolved = tools.resolve(name, action)
    if resolved is None:
        action.error = f"there is no tool named {name!r}; the tools are {sorted(tools.params)}"
        return
    if isinstance(args, dict) and "__text__" in args:
        props = sorted(tools.params[resolved][0])
        if len(props) != 1:
            action.error = f"the arguments of {resolved!r} must be a JSON object"
            return
        args = {props[0]: args["__text__"]}
        action.notes.append(f"a bare string became the argument {props[0]!r} of {resolved!r}")
    if not isinstance(args, dict):
        action.error = f"the arguments of {resolved!r} must be a JSON object, not {args!r:.80}"
        return
    action.calls.append((resolved, args))


def _python_call(text: str, tools: _Tools, action: TextAction) -> bool:
    """``name(key=value, ...)`` on a line of its own, for a known tool name."""
    for line in text.strip().splitlines():
        match = re.fullmatch(r"\s*`?([A-Za-z_][\w.]*)\((.*)\)`?\s*;?\s*", line)
        if not match or tools.resolve(match.group(1), TextAction()) is None:
            continue
        action.attempted = True
        try:
            node = ast.parse(f"f({match.group(2)})", mode="eval").body
            assert isinstance(node, ast.Call)
            if node.args:
                raise ValueError("positional arguments")
            args = {kw.arg: ast.literal_eval(kw.value) for kw in node.keywords if kw.arg}
        except (SyntaxError, ValueError, AssertionError) as exc:
            action.error = f"the call {line.strip()!r} could not be read ({exc}); use key=value"
            return True
        _call_from_object({"name": match.group(1), "arguments": args}, tools, action)
        return True
    return False


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        start = min((i for i in (text.find("{"), text.find("[")) if i >= 0), default=-1)
        if start < 0:
            raise
        obj, _ = json.JSONDecoder().raw_decode(text[start:])
        return obj


def _embedded_calls(text: str) -> list[str]:
    """JSON objects inside prose that name a tool or carry arguments."""
    found: list[str] = []
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start >= 0:
        try:
            obj, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            start = text.find("{", start + 1)
            continue
        if isinstance(obj, dict) and any(k in obj for k in (*_NAME_KEYS, *_ARG_KEYS)):
            found.append(text[start:end])
        start = text.find("{", end)
    return found


def parse_text_actions(text: str, schemas: list[dict[str, Any]]) -> TextAction:
    """Find tool calls written in ``text``, for the tools in ``schemas``."""
    tools = _Tools(schemas)
    action = TextAction()
    if "&#34;" in text or "&quot;" in text:  # chatml-function-calling HTML-escapes prompts
        text = html.unescape(text)
        action.notes.append("HTML-escaped quotes were unescaped")
    match = _FUNCTIONS.search(text)
    if match:
        action.attempted = True
        try:
            args = _loads(match.group(2))
        except json.JSONDecodeError as exc:
            action.error = f"its JSON could not be parsed ({exc.msg} at char {exc.pos})"
            return action
        _call_from_object({"name": match.group(1), "arguments": args}, tools, action)
        return action
    blocks = _TAG.findall(text)
    if not blocks:
        blocks = [b for b in _FENCE.findall(text) if re.search(r'"(name|arguments)"\s*:', b)]
    stripped = text.strip()
    if not blocks and stripped.startswith(("{", "[")) and stripped.endswith(("}", "]")):
        blocks = [stripped]
    if not blocks:
        blocks = _embedded_calls(text)
    for block in blocks:
        action.attempted = True
        try:
            obj = _loads(block)
        except json.JSONDecodeError as exc:
            action.error = f"its JSON could not be parsed ({exc.msg} at char {exc.pos})"
            return action
        _call_from_object(obj, tools, action)
        if action.error:
            return action
    if not blocks:
        _python_call(text, tools, action)
    return action


def apply_text_actions(
    response: ModelResponse, schemas: list[dict[str, Any]], salt: str = ""
) -> ModelResponse:
    """``response`` with its text action turned into tool calls, or with a correction.

    Call ids are derived from the text and ``salt`` (the caller passes the request's length),
    so a replayed run produces the same ids and two iterations never share one.
    """
    text = response.message.text
    if not text.strip():
        return response
    action = parse_text_actions(text, schemas)
    if action.error:
        return replace(
            response,
            correction=(
                f"Your action was not valid because {action.error}. Answer again: call one "
                'tool as {"name": "<tool>", "arguments": {...}}, or answer the user in plain '
                "text."
            ),
        )
    if not action.calls:
        return response
    digest = hashlib.sha1(f"{salt}:{text}".encode()).hexdigest()[:10]
    calls = tuple(
        ToolCall(
            id=f"call_text_{digest}_{i}",
            function=FunctionCall(name=name, arguments=json.dumps(args, ensure_ascii=False)),
        )
        for i, (name, args) in enumerate(action.calls)
    )
    message = AssistantMessage(content=text, tool_calls=calls)
    names = ", ".join(name for name, _ in action.calls)
    repairs = (
        *response.repairs,
        f"tool call(s) written as text were turned into real calls: {names}",
        *action.notes,
    )
    return replace(response, message=message, finish_reason="tool_calls", repairs=repairs)


class StreamedText:
    """The text of a stream; at its end, the tool-call deltas of a text action in it."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.calls = 0

    def add(self, delta: Delta) -> None:
        if delta.text:
            self.text.append(delta.text)
        if delta.tool_index is not None:
            self.calls = max(self.calls, delta.tool_index + 1)

    def action_deltas(self, schemas: list[dict[str, Any]], salt: str = "") -> list[Delta]:
        if self.calls or not schemas:
            return []
        whole = ModelResponse(AssistantMessage(content="".join(self.text)), finish_reason="stop")
        fixed = apply_text_actions(whole, schemas, salt)
        return [
            Delta(
                tool_index=i,
                tool_id=c.id,
                tool_name=c.function.name,
                arguments=c.function.arguments,
            )
            for i, c in enumerate(fixed.message.calls)
        ]
