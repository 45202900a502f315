"""A multi-turn task set with stateful tools, and agents that diverge from it on purpose.

Two per-run tool sets (a cart, a bank account) from factories (``Task(tools=factory)``);
each task has earlier turns (``history``) and an end-state check. A user turn is a list of
actions ('add item=apple; show'); the model obeys, one call per reply, every call numbered
``call_0`` (as some models do). Variants change what it does in ways a replay must notice:
skip the last call of the run, change an argument in the last turn, reverse the order of
every turn's actions, add a read at the end. Importable by a fresh process (the saved
recording's replay runs in a subprocess), so everything here is module-level.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import agentnb as an
from agentnb import checks

#: Marks the task's own turn (the last): variants change what they do there.
FINAL = "finally: "


def cart_tools() -> tuple[list[an.Tool], list[str]]:
    items: list[str] = []

    def add(item: str) -> dict:
        """Add an item to the cart."""
        items.append(item)
        return {"added": item, "count": len(items)}

    def remove(item: str) -> dict:
        """Remove an item from the cart."""
        if item not in items:
            raise an.ToolError(f"{item} is not in the cart")
        items.remove(item)
        return {"removed": item, "count": len(items)}

    def show() -> dict:
        """What the cart holds."""
        return {"items": list(items)}

    return [an.tool(add), an.tool(remove), an.tool(show)], items


def bank_tools() -> tuple[list[an.Tool], dict[str, int]]:
    account = {"balance": 100}

    def deposit(amount: int) -> dict:
        """Deposit money."""
        account["balance"] += amount
        return dict(account)

    def withdraw(amount: int) -> dict:
        """Withdraw money."""
        if amount > account["balance"]:
            raise an.ToolError("insufficient funds")
        account["balance"] -= amount
        return dict(account)

    def balance() -> dict:
        """The balance."""
        return dict(account)

    return [an.tool(deposit), an.tool(withdraw), an.tool(balance)], account


# the end-state checks, module-level so a saved evaluation keeps them by import path
def fruit_left(items: list[str]) -> bool | str:
    return items == ["apple", "fig", "kiwi"] or f"the cart holds {items}"


def greens_left(items: list[str]) -> bool | str:
    return items == ["leek", "bean", "corn"] or f"the cart holds {items}"


def saved_105(account: dict[str, int]) -> bool | str:
    return account["balance"] == 105 or f"the balance is {account['balance']}"


def spent_to_57(account: dict[str, int]) -> bool | str:
    return account["balance"] == 57 or f"the balance is {account['balance']}"


def tasks() -> an.TaskSet:
    return an.TaskSet(
        [
            an.Task("fruit", f"{FINAL}add item=kiwi; show", [checks.end_state(fruit_left)],
                    history=["add item=apple; add item=pear", "remove item=pear; add item=fig"],
                    tools=cart_tools),
            an.Task("greens", f"{FINAL}remove item=kale; add item=corn",
                    [checks.end_state(greens_left)],
                    history=["add item=leek", "add item=kale; add item=bean"], tools=cart_tools),
            an.Task("savings", f"{FINAL}withdraw amount=30; balance", [checks.end_state(saved_105)],
                    history=["deposit amount=50", "withdraw amount=20; deposit amount=5"],
                    tools=bank_tools),
            an.Task("spending", f"{FINAL}deposit amount=7", [checks.end_state(spent_to_57)],
                    history=["withdraw amount=60", "deposit amount=10; withdraw amount=500"],
                    tools=bank_tools),
        ],
        name="shop",
    )  # fmt: skip


def actions(text: str) -> list[tuple[str, dict[str, Any]]]:
    """'add item=apple; show' -> [("add", {"item": "apple"}), ("show", {})]."""
    out = []
    for part in text.removeprefix(FINAL).split(";"):
        name, *args = part.split()
        values: dict[str, Any] = {}
        for a in args:
            key, _, value = a.partition("=")
            values[key] = int(value) if value.isdigit() else value
        out.append((name, values))
    return out


def _skip_last(todo, final, request):
    return todo[:-1] if final else todo


def _change_argument(todo, final, request):
    if not final:
        return todo
    (name, args), *rest = todo
    changed = {k: v + 1 if isinstance(v, int) else f"{v}s" for k, v in args.items()}
    return [(name, changed), *rest]


def _reverse(todo, final, request):
    return todo[::-1]


def _add_read(todo, final, request):
    tools = {t["function"]["name"] for t in request.tools or ()}
    return [*todo, ("show" if "show" in tools else "balance", {})] if final else todo


#: The ways a variant departs from what was asked (and recorded).
DIVERGING = {
    "skip the last call": _skip_last,
    "change an argument": _change_argument,
    "reverse the order": _reverse,
    "add a read": _add_read,
}


def _obeying(change):
    def reply(request):
        messages = request.messages
        last_user = max(i for i, m in enumerate(messages) if m["role"] == "user")
        asked = messages[last_user]["content"]
        todo = actions(asked)
        if change is not None:
            todo = change(todo, asked.startswith(FINAL), request)
        done = sum(1 for m in messages[last_user:] if m["role"] == "tool")
        if done < len(todo):
            name, args = todo[done]
            function = {"name": name, "arguments": json.dumps(args)}
            call = {"id": "call_0", "type": "function", "function": function}
            return {"role": "assistant", "content": None, "tool_calls": [call]}
        return f"result: {messages[-1]['content']}"

    return reply


def agent(way: str | None = None) -> an.Agent:
    """The obedient agent, or one that departs from what was asked in ``way``."""
    change = DIVERGING[way] if way is not None else None
    model = an.models.FunctionModel(_obeying(change), name=way or "obedient")
    return an.Agent("Do the actions.", model=model, repeat_limit=0)


def variants() -> dict[str, an.Agent]:
    return {"recorded": agent(), **{way: agent(way) for way in DIVERGING}}


def verdicts(ev: an.Evaluation) -> dict[str, dict[str, list[str]]]:
    """variant -> task -> [outcome, error, divergence]: what a table of verdicts reads."""
    return {
        v: {r.task: [r.outcome, r.error, r.divergence] for r in ev.records if r.variant == v}
        for v in ev.variants
    }


async def replayed(recording: an.ToolRecording) -> an.Evaluation:
    """Every variant replaying the recorded variant's runs from ``recording``."""
    replaying = {name: a.replaying(recording, variant="recorded") for name, a in variants().items()}
    return await an.evaluate(replaying, tasks(), progress=False)


if __name__ == "__main__":  # a fresh process: replay from a saved recording or evaluation
    import asyncio

    kind, path = sys.argv[1], sys.argv[2]
    if kind == "recording":
        recording = an.ToolRecording.load(path)
    else:
        loaded = an.Evaluation.load(path)
        recording = an.ToolRecording.from_evaluation(loaded, variants=["recorded"])
    print(json.dumps(verdicts(asyncio.run(replayed(recording)))))
