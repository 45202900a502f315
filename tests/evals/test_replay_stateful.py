"""Replay on stateful, multi-turn work: each run replays exactly its own results (invariant 9).

Three stateful tool sets (a cart, a file system, a bank account), bound per run by the task
(``Task(tools=factory)``); a model that numbers its calls ``call_0`` in every turn; tasks of
several turns. Evaluated live, then replayed from ``ToolRecording.from_evaluation``.
"""

from __future__ import annotations

import json

import pytest

import agentnb as an
from agentnb import checks
from agentnb.evals import batches

EXECUTED: list[str] = []


def cart_tools():
    items: list[str] = []

    def add(item: str) -> dict:
        """Add an item to the cart."""
        EXECUTED.append("add")
        items.append(item)
        return {"added": item, "count": len(items)}

    def remove(item: str) -> dict:
        """Remove an item."""
        EXECUTED.append("remove")
        if item not in items:
            raise an.ToolError(f"{item} is not in the cart")
        items.remove(item)
        return {"removed": item, "count": len(items)}

    def show() -> dict:
        """The cart."""
        EXECUTED.append("show")
        return {"items": list(items)}

    return [an.tool(add), an.tool(remove), an.tool(show)], items


def files_tools():
    files: dict[str, str] = {}

    def write(path: str, text: str) -> str:
        """Write a file."""
        EXECUTED.append("write")
        files[path] = text
        return f"wrote {len(text)} characters to {path}"

    def read(path: str) -> str:
        """Read a file."""
        EXECUTED.append("read")
        if path not in files:
            raise an.ToolError(f"no file {path}")
        return files[path]

    def ls() -> list:
        """List the files."""
        EXECUTED.append("ls")
        return sorted(files)

    return [an.tool(write), an.tool(read), an.tool(ls)], files


def bank_tools():
    account = {"balance": 100}

    def deposit(amount: int) -> dict:
        """Deposit money."""
        EXECUTED.append("deposit")
        account["balance"] += amount
        return dict(account)

    def withdraw(amount: int) -> dict:
        """Withdraw money."""
        EXECUTED.append("withdraw")
        if amount > account["balance"]:
            raise an.ToolError("insufficient funds")
        account["balance"] -= amount
        return dict(account)

    def balance() -> dict:
        """The balance."""
        EXECUTED.append("balance")
        return dict(account)

    return [an.tool(deposit), an.tool(withdraw), an.tool(balance)], account


def plan(text: str) -> list[tuple[str, dict]]:
    """A user turn is a list of actions: 'add item=apple; show'."""
    out = []
    for part in text.split(";"):
        name, *args = part.split()
        values = {}
        for a in args:
            key, _, value = a.partition("=")
            values[key] = int(value) if value.isdigit() else value
        out.append((name, values))
    return out


def obedient(request):
    """Calls the turn's actions one reply each, every call numbered call_0 (as some models
    do), then answers with the last result."""
    messages = request.messages
    last_user = max(i for i, m in enumerate(messages) if m["role"] == "user")
    done = sum(1 for m in messages[last_user:] if m["role"] == "tool")
    actions = plan(messages[last_user]["content"])
    if done < len(actions):
        name, args = actions[done]
        arguments = json.dumps(args, ensure_ascii=False)
        call = {
            "id": "call_0",
            "type": "function",
            "function": {"name": name, "arguments": arguments},
        }
        return {"role": "assistant", "content": None, "tool_calls": [call]}
    return f"result: {messages[-1]['content']}"


def _cart_has(expected):
    def check(items):
        return items == expected or f"cart is {items}"

    return check


def _balance_is(expected):
    def check(account):
        return account["balance"] == expected or f"balance is {account['balance']}"

    return check


TASKS = an.TaskSet(
    [
        an.Task("apple", "show", history=["add item=apple", "add item=pear; remove item=pear"],
                tools=cart_tools, checks=[checks.end_state(_cart_has(["apple"]))]),
        an.Task("pear", "show", history=["add item=pear", "add item=fig; remove item=fig"],
                tools=cart_tools, checks=[checks.end_state(_cart_has(["pear"]))]),
        an.Task("notes", "read path=b.txt", history=["write path=a.txt text=one",
                "write path=b.txt text=two; ls"], tools=files_tools,
                checks=[checks.answer_contains("two")]),
        an.Task("bank", "balance", history=["deposit amount=50", "withdraw amount=500"],
                tools=bank_tools, checks=[checks.end_state(_balance_is(150))]),
        an.Task("bank-spend", "balance", history=["withdraw amount=30", "deposit amount=5"],
                tools=bank_tools, checks=[checks.end_state(_balance_is(75))]),
    ]
)  # fmt: skip


@pytest.fixture(autouse=True)
def _clear():
    EXECUTED.clear()


def agent(fn=obedient) -> an.Agent:
    return an.Agent("follow the actions", model=an.models.FunctionModel(fn), repeat_limit=0)


async def test_every_run_replays_exactly_its_own_results_with_no_execution():
    live = await an.evaluate({"a": agent()}, TASKS, repeats=2)
    assert {r.outcome for r in live.records} == {"pass"}, live.runs[["task", "failed_checks"]]
    executed = len(EXECUTED)
    assert executed == 2 * 18
    recording = an.ToolRecording.from_evaluation(live)
    EXECUTED.clear()
    replayed = await an.evaluate({"a": agent().replaying(recording)}, TASKS, repeats=2)
    assert EXECUTED == []  # 0 executions: every result came from the recording
    assert recording.misses == [] and recording.hits == executed
    for r in live.records:
        again = replayed.record("a", r.task, r.repeat)
        assert again.outcome == r.outcome and again.divergence == ""
        before = [m.content for m in live.session("a", r.task, r.repeat).messages]
        after = [m.content for m in replayed.session("a", r.task, r.repeat).messages]
        assert before == after  # its own results, turn by turn ("show" saw its own cart)
    # the end-state checks agree: the replayed state is the live one's, bound per run
    assert [r.checks for r in live.records] == [
        replayed.record("a", r.task, r.repeat).checks for r in live.records
    ]


def test_ids_reused_in_every_turn_pair_with_their_own_turns_results():
    """Defect 1: pairing by the last tool message with an id across the session."""
    call = {"id": "call_0", "type": "function"}
    messages = [
        {"role": "user", "content": "Beijing?"},
        {"role": "assistant", "content": None,
         "tool_calls": [{**call, "function": {"name": "weather", "arguments": '{"city": "Beijing"}'}}]},
        {"role": "tool", "tool_call_id": "call_0", "content": "Beijing: sunny"},
        {"role": "assistant", "content": "sunny"},
        {"role": "user", "content": "Shanghai?"},
        {"role": "assistant", "content": None,
         "tool_calls": [{**call, "function": {"name": "weather", "arguments": '{"city": "Shanghai"}'}}]},
        {"role": "tool", "tool_call_id": "call_0", "content": "Shanghai: rain"},
        {"role": "assistant", "content": "rain"},
    ]  # fmt: skip
    an.testing.assert_valid_conversation(messages)
    paired = [c for b in batches(messages) for c in b]
    assert [(c.args["city"], c.result, c.position) for c in paired] == [
        ("Beijing", "Beijing: sunny", (0, 0, 0)),
        ("Shanghai", "Shanghai: rain", (1, 0, 0)),
    ]
    recording = an.ToolRecording.from_sessions([messages])
    assert [e.result for e in recording.entries] == ["Beijing: sunny", "Shanghai: rain"]


async def test_a_stateful_tool_never_replays_another_tasks_answer():
    """Defect 2: show() after add(apple) in one task and add(pear) in another."""
    live = await an.evaluate({"a": agent()}, TASKS.select(["apple", "pear"]))
    recording = an.ToolRecording.from_evaluation(live)
    replayed = await an.evaluate(
        {"a": agent().replaying(recording)}, TASKS.select(["apple", "pear"])
    )
    for task, item in (("apple", "apple"), ("pear", "pear")):
        shown = replayed.session("a", task).messages[-2].content
        assert json.loads(shown) == {"items": [item]}


async def test_a_setup_that_replaces_the_replaying_tools_raises_at_once():
    """Defect 3: a setup binding per-run tools silently undid agent.replaying()."""
    live = await an.evaluate({"a": agent()}, TASKS.select(["apple"]))
    recording = an.ToolRecording.from_evaluation(live)
    EXECUTED.clear()

    def rebind(run_agent):
        tools, items = cart_tools()
        run_agent.tools = tools
        return items

    old_style = an.TaskSet([TASKS["apple"].model_copy(update={"tools": None, "setup": rebind})])
    ev = await an.evaluate({"a": agent().replaying(recording)}, old_style)
    record = ev.records[0]
    assert record.outcome == "error" and "live tools (add, remove, show)" in record.error
    assert "Task(tools=factory)" in record.error and EXECUTED == []
    # the same setup with a live agent is fine
    assert (await an.evaluate({"a": agent()}, old_style)).records[0].outcome == "pass"


async def test_divergence_names_the_turn_and_step_of_an_earlier_turn():
    """Defect 4: divergence read only the last turn."""
    live = await an.evaluate({"a": agent()}, TASKS.select(["bank"]))
    recording = an.ToolRecording.from_evaluation(live)

    def greedy(request):  # withdraws 5 more in the first turn: the replay leaves there
        reply = obedient(request)
        if (
            isinstance(reply, dict)
            and '"amount": 50' in reply["tool_calls"][0]["function"]["arguments"]
        ):
            reply["tool_calls"][0]["function"]["arguments"] = '{"amount": 55}'
        return reply

    ev = await an.evaluate({"a": agent(greedy).replaying(recording)}, TASKS.select(["bank"]))
    record = ev.records[0]
    assert record.divergence.startswith("turn 0, step 0, call 0: deposit(")
    assert "mismatch" in record.divergence and EXECUTED.count("deposit") == 1  # the live one
