"""``python -m agentnb optimize``: the optimiser from a terminal, beside ``eval``.

    python -m agentnb optimize tasks.jsonl --agent myproject.agents:agent \\
        --proposer myproject.models:reflector --budget 150 --seed 0 \\
        --save opt.jsonl --json opt.json --best best.json

``TASKS`` and ``module:attribute`` specs are read as by ``eval`` (:mod:`agentnb.evals.ci`):
``--agent`` names an agent (or a function returning one); ``--proposer`` names a model (or a
function returning one), or ``travel`` for the stand-in's offline proposer. A progress bar
shows the metric calls spent; at the end the summary, the history and the incumbent's texts
are printed, and ``--best`` writes them as JSON (``{"instructions", "tools"}``).
``--best-unproven`` writes the strongest candidate the gate held (better than the incumbent
on the held-out tasks, not proven): the same two keys, with ``"unproven": true`` and a
``"label"`` saying so; nothing is written (and stderr says why) when no held candidate did
better.

Exit status: 0 when it ran (``--require-improvement``: 0 only if a candidate was promoted,
else 1); 2 on a usage error (a path, a spec, a setting); 3 when it crashed (the optimiser
failed: ``--save`` is still written first, with everything decided before the failure).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import warnings
from pathlib import Path
from typing import Any

from ...errors import ConfigurationError
from ...storage import dumps
from ..ci import EPILOG, EXIT, crashing, load_spec, load_tasks, writable
from .budget import BudgetWarning
from .tables import unproven

__all__ = ["add_parser", "main"]


def add_parser(sub: Any) -> None:
    o = sub.add_parser(
        "optimize",
        help="improve an agent's instructions and tool descriptions, gated",
        epilog=EPILOG,
    )
    o.add_argument("tasks", help="a task file (.jsonl) or module:attribute naming a TaskSet")
    o.add_argument("--agent", required=True, help="module:attribute: an agent or a factory")
    o.add_argument(
        "--proposer",
        required=True,
        help="module:attribute: a model or a factory; 'travel' for the stand-in's proposer",
    )
    o.add_argument("--budget", type=int, default=150, help="metric calls (scored task runs)")
    o.add_argument("--validation", type=float, default=0.5, help="share of tasks held out")
    o.add_argument("--minibatch", type=int, default=4)
    o.add_argument("--repeats", type=int, default=1)
    o.add_argument("--alpha", type=float, default=0.05, help="the gate's level")
    o.add_argument(
        "--gate",
        choices=["tasks", "pairs", "bootstrap", "mcnemar"],
        default="tasks",
        help="the gate's test: tasks (each task once, its repeats as its pass rate), pairs "
        "(McNemar over (task, repeat) pairs: assumes repeats independent; mcnemar is its former "
        "name), bootstrap",
    )
    o.add_argument("--seed", type=int, default=0)
    o.add_argument("--patience", type=int, default=5)
    o.add_argument("--concurrency", type=int, default=8)
    o.add_argument("--timeout", type=float, default=300.0, help="seconds per run")
    o.add_argument("--save", type=Path, help="save the whole optimisation (Optimisation.load)")
    o.add_argument("--json", type=Path, help="write the candidates and the history here")
    o.add_argument("--best", type=Path, help="write the incumbent's texts here (JSON)")
    o.add_argument(
        "--best-unproven",
        type=Path,
        help="write the strongest candidate the gate held here (JSON, labelled unproven)",
    )
    o.add_argument(
        "--trust", action="store_true", help="import and run the functions a task file names"
    )
    o.add_argument("--require-improvement", action="store_true", help="exit 1 if none promoted")
    o.add_argument("--quiet", action="store_true", help="no progress bar")


def main(args: argparse.Namespace, shortcuts: dict[str, Any] | None = None) -> int:
    """Run the command; ``shortcuts`` maps proposer names to factories (``python -m
    agentnb`` gives ``travel``: the stand-in's proposer, from the layer above this one)."""
    try:
        unproven_path = getattr(args, "best_unproven", None)
        for path in (args.save, args.json, args.best, unproven_path):  # before the budget
            writable(path)  # is spent, not after it
        agent = load_spec(args.agent, "agent")  # first: the modules it imports ...
        made = (shortcuts or {}).get(args.proposer)
        proposer = made() if made is not None else load_spec(args.proposer, "proposer")
        tasks = load_tasks(args.tasks, args.trust)  # ... are the ones a task file may name
    except (ConfigurationError, OSError) as exc:
        print(f"agentnb optimize: {exc}", file=sys.stderr)
        return EXIT["usage"]
    return crashing("optimize", lambda: asyncio.run(run(tasks, agent, proposer, args)))


async def run(tasks: Any, agent: Any, proposer: Any, args: argparse.Namespace) -> int:
    from .start import optimize

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", BudgetWarning)
        try:
            opt = await optimize(
                agent,
                tasks,
                proposer=proposer,
                budget=args.budget,
                validation=args.validation,
                minibatch=args.minibatch,
                repeats=args.repeats,
                alpha=args.alpha,
                gate=args.gate,
                seed=args.seed,
                patience=args.patience,
                concurrency=args.concurrency,
                timeout=args.timeout,
                progress=not args.quiet,
            )
        except ConfigurationError as exc:
            print(f"agentnb optimize: {exc}", file=sys.stderr)
            return EXIT["usage"]
    for w in caught:
        print(f"warning: {w.message}", file=sys.stderr)
    if args.save:  # first: whatever happens next, the run is kept
        opt.save(args.save)
    if opt.error is not None:
        kept = f"; what it decided before is in {str(args.save)!r}" if args.save else ""
        print(f"agentnb optimize: the optimiser failed: {opt.stop_reason}{kept}", file=sys.stderr)
        return EXIT["crash"]
    print(opt.summary())
    shown = opt.history[["step", "event", "parent", "candidate", "calls_used", "reason"]]
    print(shown.to_string(index=False, max_colwidth=90))
    best = opt.best
    print(f"\nthe incumbent {best.id}'s instructions:\n{best.texts.instructions}")
    if args.best:
        args.best.write_text(dumps(best.texts.to_dict(), indent=1) + "\n", encoding="utf-8")
    if getattr(args, "best_unproven", None):
        held = unproven(opt)
        if held is None:
            print(
                f"--best-unproven: no held candidate did better than {best.id} on the held-out "
                f"tasks; {args.best_unproven} not written",
                file=sys.stderr,
            )
        else:
            text = dumps(held, indent=1) + "\n"
            args.best_unproven.write_text(text, encoding="utf-8")
            print(f"\n{held['label']}: written to {args.best_unproven}")
    if args.json:
        data = {
            "summary": opt.summary(),
            "best": best.id,
            "metric_calls": opt.metric_calls,
            "stop_reason": opt.stop_reason,
            "candidates": [c.to_dict() for c in opt.candidates],
            "history": json.loads(json.dumps(opt.steps, default=str)),
        }
        args.json.write_text(dumps(data, indent=1) + "\n", encoding="utf-8")
    if args.require_improvement and best.id == "c0":
        print("no candidate was promoted", file=sys.stderr)
        return EXIT["regression"]
    return EXIT["ok"]
