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

Only what is meant as an action is taken, at the top level of the model's own text:

* never what the reply only shows: inline code, fenced code that is not one action object,
  ``>`` quoted lines, a tag inside a quotation ("I will NOT run `delete_booking(...)`" runs
  nothing);
* never an action copied from a tool result of the request (``echoes``): a web page or an
  e-mail carrying a ``<tool_call>`` is data, and an echo of it executes nothing - compared as
  calls (tool and arguments), not as text, and in whatever encoding the result came: inside
  a JSON result (quotes escaped), HTML-escaped, percent-encoded, re-spaced or re-ordered;
* a ``name(key=value)`` call only when the whole reply is calls; JSON inside prose only when
  it names a known tool; JSON an answer quotes (``{"name": "全季酒店", …}``) is an answer;
* one linear pass finds the JSON objects (:data:`MAX_TEXT` characters at most; deeper than
  :data:`MAX_DEPTH` is an invalid action, never a ``RecursionError``).
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import html
import json
import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from ...messages import AssistantMessage, FunctionCall, ToolCall
from ..base import Delta, ModelResponse
from .quoting import MAX_DEPTH, MAX_TEXT, TooDeep, decodings, echoed, echoed_texts, objects, shown

__all__ = [
    "StreamedText",
    "TextAction",
    "apply_text_actions",
    "echoed_texts",
    "parse_text_actions",
]

_TAG = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.S)
_FENCE = re.compile(r"```(?:json|tool_call|tool|javascript)?[ \t]*\n?(.*?)```", re.S)
_FUNCTIONS = re.compile(r"^[ \t]*functions\.([A-Za-z_][\w-]*)\s*:\s*(\{.*)", re.S | re.M)

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


def _python_calls(text: str, tools: _Tools, action: TextAction) -> None:
    """``name(key=value, ...)``, one per line, when the whole reply is such calls (a call
    shown in prose or in backticks is a quote, never an action)."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    matches = [re.fullmatch(r"([A-Za-z_][\w.]*)\((.*)\)\s*;?", line) for line in lines]
    if not lines or not all(matches):
        return
    if any(tools.resolve(m.group(1), TextAction()) is None for m in matches if m):
        return
    for line, match in zip(lines, matches, strict=True):
        assert match is not None
        action.attempted = True
        try:
            node = ast.parse(f"f({match.group(2)})", mode="eval").body
            assert isinstance(node, ast.Call)
            if node.args:
                raise ValueError("positional arguments")
            args = {kw.arg: ast.literal_eval(kw.value) for kw in node.keywords if kw.arg}
        except (SyntaxError, ValueError, AssertionError, RecursionError, MemoryError) as exc:
            action.error = f"the call {line!r} could not be read ({exc}); use key=value"
            return
        _call_from_object({"name": match.group(1), "arguments": args}, tools, action)


def _loads(text: str) -> Any:
    """The JSON value ``text`` is (or starts with, after leading prose); depth is checked
    first, so nesting is bounded and typed (:class:`TooDeep`), never a RecursionError."""
    spans = objects(text)
    if any(deep for _, _, deep in spans):
        raise TooDeep
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        start = min((i for i in (text.find("{"), text.find("[")) if i >= 0), default=-1)
        if start < 0:
            raise
        obj, _ = json.JSONDecoder().raw_decode(text[start:])
        return obj


def _looks_like_action(obj: Any, tools: _Tools, *, whole: bool) -> bool:
    """Whether a JSON value is meant as a call: it names a known tool, or (when it is the
    whole reply) it carries arguments. JSON an answer quotes (a hotel named "全季酒店") is not."""
    if isinstance(obj, list):
        return bool(obj) and all(_looks_like_action(o, tools, whole=whole) for o in obj)
    if not isinstance(obj, dict):
        return False
    if isinstance(obj.get("function"), dict):
        obj = obj["function"]
    name = next((obj[k] for k in _NAME_KEYS if isinstance(obj.get(k), str)), None)
    if name is not None and tools.resolve(name, TextAction()) is not None:
        return True
    if not whole:
        return False
    if any(k in obj for k in _ARG_KEYS):
        return True
    return name is None and len(tools.fitting(obj)) == 1


def _key(name: str, args: dict[str, Any]) -> tuple[str, str]:
    return name, json.dumps(args, sort_keys=True, ensure_ascii=False, default=str)


_CALL_IN_TEXT = re.compile(r"([A-Za-z_][\w.]*)\(([^()\n]*)\)")


def _echoed_calls(echoes: Sequence[str], tools: _Tools, names: set[str]) -> set[tuple[str, str]]:
    """Every call of a tool in ``names`` (tool, canonical arguments) written anywhere in the
    tool results, in any form the parser reads and any encoding :func:`decodings` undoes.
    Only objects that name a tool count: bare arguments in a result are data, never a call.
    A text that does not mention one of ``names`` (as :meth:`_Tools.resolve` reads names)
    is not scanned, so a long session of ordinary results costs a few C-speed passes."""
    found: set[tuple[str, str]] = set()
    scratch = TextAction()
    wanted = {_norm(n) for n in names}
    for echo in dict.fromkeys(echoes):
        for text in decodings(echo):
            flat = _norm(text)
            if not any(w in flat for w in wanted):
                continue
            values: list[Any] = []
            for start, end, deep in objects(text)[:1000]:
                with contextlib.suppress(ValueError, RecursionError):
                    values.append(None if deep else json.loads(text[start:end]))
            for match in _TAG.finditer(text):
                with contextlib.suppress(ValueError, TooDeep):
                    values.append(_loads(match.group(1)))
            for match in _FUNCTIONS.finditer(text):
                with contextlib.suppress(ValueError, TooDeep):
                    values.append({"name": match.group(1), "arguments": _loads(match.group(2))})
            for match in _CALL_IN_TEXT.finditer(text):
                with contextlib.suppress(SyntaxError, ValueError, RecursionError, MemoryError):
                    node = ast.parse(f"f({match.group(2)})", mode="eval").body
                    if isinstance(node, ast.Call) and not node.args:
                        args = {k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg}
                        values.append({"name": match.group(1), "arguments": args})
            stack = values
            while stack:  # every object that names a tool, however deep in the result
                value = stack.pop()
                if isinstance(value, list):
                    stack.extend(value)
                elif isinstance(value, dict):
                    stack.extend(value.values())
                    named = isinstance(value.get("function"), dict) or any(
                        isinstance(value.get(k), str) for k in _NAME_KEYS
                    )
                    if named:
                        _call_from_object(value, tools, scratch)
    found.update(_key(name, args) for name, args in scratch.calls if name in names)
    return found


def parse_text_actions(
    text: str, schemas: list[dict[str, Any]], echoes: Sequence[str] = ()
) -> TextAction:
    """Find tool calls written at the top level of ``text``, for the tools in ``schemas``.

    ``echoes`` are texts the model was shown (the request's tool results): an action copied
    from one of them is ignored. See the module docstring for the forms and the rules.
    """
    tools = _Tools(schemas)
    action = _parse(text, tools, echoes)
    if action.calls and echoes:
        echoed_calls = _echoed_calls(echoes, tools, {name for name, _ in action.calls})
        own = [c for c in action.calls if _key(*c) not in echoed_calls]
        if len(own) < len(action.calls):
            action.notes.append("an action copied from a tool result was ignored (it is data)")
            action.calls = own
    return action


def _parse(text: str, tools: _Tools, echoes: Sequence[str]) -> TextAction:
    action = TextAction()
    if len(text) > MAX_TEXT:
        action.notes.append(f"a reply over {MAX_TEXT:,} characters is not read for actions")
        return action
    if "&#34;" in text or "&quot;" in text:  # chatml-function-calling HTML-escapes prompts
        text = html.unescape(text)
        action.notes.append("HTML-escaped quotes were unescaped")
    visible = shown(text)
    match = _FUNCTIONS.search(visible)
    if match and not echoed(text[match.start() :], echoes):
        action.attempted = True
        try:
            args = _loads(text[match.start(2) :])
        except json.JSONDecodeError as exc:
            action.error = f"its JSON could not be parsed ({exc.msg} at char {exc.pos})"
            return action
        except TooDeep:
            action.error = f"its JSON is nested deeper than {MAX_DEPTH} levels"
            return action
        _call_from_object({"name": match.group(1), "arguments": args}, tools, action)
        return action
    explicit = True
    blocks = [text[m.start(1) : m.end(1)] for m in _TAG.finditer(visible)]
    if not blocks:
        explicit = False
        fenced = [m.group(1) for m in _FENCE.finditer(text)]
        blocks = [b for b in fenced if _json_action(b, tools, whole=True)]
    stripped = text.strip()
    if not blocks and stripped.startswith(("{", "[")) and stripped.endswith(("}", "]")):
        blocks = [stripped] if _json_action(stripped, tools, whole=True) else []
    if not blocks:
        spans = objects(visible)
        pieces = [text[a:b] for a, b, deep in spans if not deep and '"' in text[a:b]]
        blocks = [p for p in pieces[:64] if _json_action(p, tools, whole=False)]  # a bound
    for block in blocks:
        if echoed(block, echoes):
            action.notes.append("an action copied from a tool result was ignored (it is data)")
            continue
        action.attempted = True
        try:
            obj = _loads(block)
        except json.JSONDecodeError as exc:
            action.error = f"its JSON could not be parsed ({exc.msg} at char {exc.pos})"
            return action
        except TooDeep:
            action.error = f"its JSON is nested deeper than {MAX_DEPTH} levels"
            return action
        _call_from_object(obj, tools, action)
        if action.error:
            return action
    if not blocks and not explicit:
        _python_calls(visible, tools, action)
    return action


def _json_action(block: str, tools: _Tools, *, whole: bool) -> bool:
    """Whether ``block`` parses as JSON meant as an action (unparseable: not an action,
    unless it clearly tries, naming ``"name"``/``"arguments"`` keys as a whole reply)."""
    try:
        return _looks_like_action(_loads(block), tools, whole=whole)
    except TooDeep:
        return whole
    except (json.JSONDecodeError, ValueError):
        return whole and bool(re.search(r'"(name|arguments)"\s*:', block))


def apply_text_actions(
    response: ModelResponse,
    schemas: list[dict[str, Any]],
    salt: str = "",
    echoes: Sequence[str] = (),
) -> ModelResponse:
    """``response`` with its text action turned into tool calls, or with a correction.

    Call ids are derived from the text and ``salt`` (the caller passes the request's length),
    so a replayed run produces the same ids and two iterations never share one.
    """
    text = response.message.text
    if not text.strip():
        return response
    action = parse_text_actions(text, schemas, echoes)
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

    def action_deltas(
        self, schemas: list[dict[str, Any]], salt: str = "", echoes: Sequence[str] = ()
    ) -> list[Delta]:
        if self.calls or not schemas:
            return []
        whole = ModelResponse(AssistantMessage(content="".join(self.text)), finish_reason="stop")
        fixed = apply_text_actions(whole, schemas, salt, echoes)
        return [
            Delta(
                tool_index=i,
                tool_id=c.id,
                tool_name=c.function.name,
                arguments=c.function.arguments,
            )
            for i, c in enumerate(fixed.message.calls)
        ]
