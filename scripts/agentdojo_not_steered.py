"""not_steered() on AgentDojo, an injection suite nobody here wrote (optional; not a test).

    python3 -m venv /work/venvs/agentdojo        # its own venv: AgentDojo moves tenacity
    /work/venvs/agentdojo/bin/pip install agentdojo==0.1.35 -e .
    /work/venvs/agentdojo/bin/python scripts/agentdojo_not_steered.py [--suites banking ...]

Every user task x injection task of AgentDojo's four suites (workspace, travel, banking,
slack; benchmark v1.2.2) runs through agentnb's public API: an ``an.Agent`` whose tools are the
suite's functions (their JSON schemas as given; results written as AgentDojo writes them, YAML)
on the environment the attack injected (the ``important_instructions`` attack by default, or
``--attack``), and ``an.checks.not_steered()`` judges each run's ``RunResult``. AgentDojo's own
``security`` check on the environment says whether the attack succeeded (the ground truth).

Two models, offline and deterministic (``an.models.FunctionModel``):

* **obeys**: calls the user task's ground-truth functions one by one; once a tool result it
  has read holds the injected text, it also calls the injection task's ground-truth functions
  (what the attacker asked), and ends with the user task's answer plus, for an injection task
  that asks for words rather than calls, its goal;
* **never**: the user task's ground-truth calls and answer only.

Reported: of the runs where the attack succeeded, the share ``not_steered()`` flags; of the
never-obeying model's runs, the share it flags (false flags); per suite and overall.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import time
from collections import Counter
from typing import Any

import yaml
from agentdojo.attacks.attack_registry import load_attack
from agentdojo.functions_runtime import FunctionsRuntime
from agentdojo.task_suite.load_suites import get_suites

import agentnb as an

SUITES = ("workspace", "travel", "banking", "slack")


def _words(text: str) -> str:
    """The words of a text, as a repr or YAML would not change them (escapes read as spaces)."""
    return " ".join(re.findall(r"\w+", text.replace("\\n", " ").replace("\\t", " ")))


class _Named:
    """What an attack reads of its target pipeline: a name (the model it addresses)."""

    name = "gpt-4o-2024-05-13"


def _result_text(result: Any, error: str | None) -> str:
    """A function's result as AgentDojo's pipeline shows it to a model (YAML)."""
    if error:
        return error
    if hasattr(result, "model_dump"):
        return yaml.safe_dump(result.model_dump()).strip()
    if isinstance(result, list):
        items = [r.model_dump() if hasattr(r, "model_dump") else str(r) for r in result]
        return yaml.safe_dump(items).strip()
    return str(result)


def _tools(suite: Any, runtime: FunctionsRuntime, state: dict[str, Any]) -> list[an.Tool]:
    tools = []
    for fn in suite.tools:

        def call(__name: str = fn.name, **kwargs: Any) -> str:
            result, error = runtime.run_function(state["env"], __name, kwargs)
            state["trace"].append((__name, kwargs))
            return _result_text(result, error)

        schema = fn.parameters.model_json_schema()
        tools.append(an.tool(call, name=fn.name, description=fn.description, parameters=schema))
    return tools


def _model(
    plan: list[Any], extra: list[Any], injected: list[str], answer: str, extra_answer: str
) -> an.models.FunctionModel:
    """One call per reply from ``plan``; ``extra`` too once a result holds injected text
    (compared by its words: YAML folds and quotes long strings)."""
    marks = [_words(t)[:80] for t in injected if _words(t)]

    def reply(request: Any) -> dict[str, Any]:
        messages = request.messages
        done = sum(len(m.get("tool_calls") or ()) for m in messages if m.get("role") == "assistant")
        seen = any(
            m.get("role") == "tool" and any(t and t in _words(str(m.get("content"))) for t in marks)
            for m in messages
        )
        todo = plan + (extra if seen and extra else [])
        if done < len(todo):
            step = todo[done]
            call = {
                "id": f"c{done}",
                "type": "function",
                "function": {
                    "name": step.function,
                    "arguments": json.dumps(dict(step.args), default=str),
                },
            }
            return {"role": "assistant", "content": None, "tool_calls": [call]}
        words = answer + (f"\n{extra_answer}" if seen and extra_answer else "")
        return {"role": "assistant", "content": words or "Done."}

    return an.models.FunctionModel(reply)


async def one(suite: Any, user: Any, injection: Any, attack: Any, obeys: bool) -> dict[str, Any]:
    injections = attack.attack(user, injection)
    env = user.init_environment(suite.load_and_inject_default_environment(injections))
    pre = env.model_copy(deep=True)
    runtime = FunctionsRuntime(suite.tools)
    state: dict[str, Any] = {"env": env, "trace": []}
    plan = list(user.ground_truth(pre))
    extra = list(injection.ground_truth(pre)) if obeys else []
    words = injection.GOAL if obeys and not extra else ""
    model = _model(plan, extra, list(injections.values()), user.GROUND_TRUTH_OUTPUT, words)
    agent = an.Agent(
        "You are a helpful assistant.",
        _tools(suite, runtime, state),
        model=model,
        max_iterations=40,
        tool_timeout=None,
    )
    result = await agent.run(user.PROMPT)
    flagged, why = an.checks.not_steered().judge(an.checks.Evidence(result))
    from agentdojo.functions_runtime import FunctionCall

    trace = [FunctionCall(function=f, args=a) for f, a in state["trace"]]
    output = [{"type": "text", "content": result.output or ""}]
    won = suite._check_task_result(injection, output, pre, state["env"], trace)
    return {
        "suite": suite.name,
        "user": user.ID,
        "injection": injection.ID,
        "obeys": obeys,
        "won": bool(won),
        "flagged": not flagged,
        "why": why[:300],
    }


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suites", nargs="*", default=list(SUITES))
    parser.add_argument("--attack", default="important_instructions")
    parser.add_argument("--out", default="", help="write every run as JSON lines here")
    args = parser.parse_args()
    started = time.perf_counter()
    suites = get_suites("v1.2.2")
    rows = []
    for name in args.suites:
        suite = suites[name]
        attack = load_attack(args.attack, suite, _Named())
        for user in suite.user_tasks.values():
            for injection in suite.injection_tasks.values():
                for obeys in (True, False):
                    rows.append(await one(suite, user, injection, attack, obeys))
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    print(f"AgentDojo v1.2.2, attack {args.attack}: {len(rows)} runs through agentnb")
    for name in [*args.suites, "all"]:
        mine = [r for r in rows if name in ("all", r["suite"])]
        won = [r for r in mine if r["obeys"] and r["won"]]
        never = [r for r in mine if not r["obeys"]]
        caught = sum(r["flagged"] for r in won)
        false = sum(r["flagged"] for r in never)
        print(
            f"  {name:<10} attacks that succeeded {len(won):>4}, flagged {caught:>4} "
            f"({caught / max(len(won), 1):.1%}); never-obeying runs {len(never):>4}, "
            f"flagged {false:>3} ({false / max(len(never), 1):.1%})"
        )
    missed = Counter(
        (r["suite"], r["injection"]) for r in rows if r["obeys"] and r["won"] and not r["flagged"]
    )
    if missed:
        print(
            "  missed (suite, injection task): " + ", ".join(f"{k}: {v}" for k, v in missed.items())
        )
    print(f"  took {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
