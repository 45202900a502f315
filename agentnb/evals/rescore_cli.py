"""``python -m agentnb rescore``: stored runs checked again, no agent model called.

    python -m agentnb rescore e-1a2b --checks myproject.checks:STRICTER
    python -m agentnb rescore saved.jsonl --tasks tasks_v2.jsonl --judge myproject:judge_model

``SOURCE`` is an experiment in the log (its id, or the one id it begins; ``--log PLACE``
names the log) or an evaluation saved with ``ev.save``. ``--checks module:attribute``: a
list of checks for every task, or ``{task: [checks]}``; ``--tasks``: a task file or
``module:attribute`` whose tasks' checks replace those of the same names; neither: the tasks'
own checks. ``--judge module:attribute``: the model of judge checks. It prints each variant's
outcomes before and after and the runs whose outcome changed, records the rescore in the log
(linked to its source), and writes ``--json``/``--save`` when asked. Exit status: 0 done,
2 usage (an unknown experiment, a check refused by name), 3 a crash.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from ..errors import ConfigurationError
from ..storage import dumps
from .ci_options import cli_log, log_option

__all__ = ["add_parser", "main"]


def add_parser(sub: Any) -> None:
    """The ``rescore`` subcommand of ``python -m agentnb``."""
    r = sub.add_parser("rescore", help="check stored runs again, without calling the agent's model")
    r.add_argument("source", help="an experiment id in the log, or a saved evaluation (.jsonl)")
    r.add_argument("--checks", help="module:attribute: checks for every task, or {task: [checks]}")
    r.add_argument("--tasks", help="a task file or module:attribute: tasks whose checks to use")
    r.add_argument("--judge", help="module:attribute: the model of judge checks")
    r.add_argument("--trust", action="store_true", help="run checks kept by their source")
    r.add_argument("--json", type=Path, help="write the rescored records and summary here")
    r.add_argument("--save", type=Path, help="save the rescored evaluation here")
    log_option(r)


def main(args: argparse.Namespace) -> int:
    try:
        return asyncio.run(run(args))
    except (ConfigurationError, KeyError, OSError) as exc:
        print(f"agentnb rescore: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:
        print(f"agentnb rescore: crashed: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 3


def _source(args: argparse.Namespace, judge: Any) -> Any:
    from .evaluation import Evaluation
    from .log import experiment

    log = cli_log(args)["log"]
    if Path(args.source).is_file():
        return Evaluation.load(args.source, judge=judge, trust=args.trust)
    found = experiment(args.source, log, judge=judge, trust=args.trust)
    return getattr(found, "evaluation", found)  # an optimisation: its runs


async def run(args: argparse.Namespace) -> int:
    from .ci import load_spec, load_tasks

    judge = load_spec(args.judge, "judge") if args.judge else None
    checks = load_spec(args.checks, "checks") if args.checks else None
    tasks = load_tasks(args.tasks, args.trust) if args.tasks else None
    ev = _source(args, judge)
    new = await ev.rescore(checks, tasks, judge=judge, **cli_log(args))
    before = {r.key: r.outcome for r in ev.records}
    changed = [
        (r.key, before.get(r.key), r.outcome) for r in new.records if before.get(r.key) != r.outcome
    ]
    print(new.summary[["n", "passed", "failed", "errors", "success_rate"]].to_string())
    for variant in new.variants:
        was = sum(before.get(r.key) == "pass" for r in new.records if r.variant == variant)
        now = sum(r.passed for r in new.records if r.variant == variant)
        print(f"{variant}: {was} passed before, {now} now")
    print(f"{len(changed)} runs changed outcome" + (":" if changed else ""))
    for (variant, task, repeat), a, b in changed[:50]:
        print(f"    {variant} {task}#{repeat}: {a} -> {b}")
    judged = getattr(new, "judge_runs", [])
    if judged:
        calls = sum(r.iterations for r in judged)
        tokens = sum(r.usage.total_tokens for r in judged)
        print(f"judge: {calls} calls, {tokens} tokens")
    if new.experiment is not None:
        print(f"recorded as experiment {new.experiment.id} (rescore of {new.experiment.source})")
    if args.json:
        data = {"records": [r.to_dict() for r in new.records], "changed": changed}
        summary = json.loads(new.summary.reset_index().to_json(orient="records", force_ascii=False))
        args.json.write_text(dumps({**data, "summary": summary}, indent=1) + "\n", encoding="utf-8")
    if args.save:
        new.save(args.save)
    return 0
