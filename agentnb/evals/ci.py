"""The CI runner: keep a prompt from regressing, from a terminal or a build.

    python -m agentnb eval tasks.jsonl --variants myproject.variants:VARIANTS \\
        --baseline article --repeats 3 --junit report.xml --json report.json

``TASKS`` is a task file (``TaskSet.to_jsonl``) or ``module:attribute`` naming a TaskSet;
``--variants`` names ``module:attribute``: a dict of names to agents (or apps, see
:mod:`agentnb.evals.apps`), a function returning one, or one agent. Modules are imported
from the current directory first. The runner prints a progress line, the summary and the
paired comparison of every variant with the baseline, and writes JSON and JUnit XML when
asked (one test case per run, and one per comparison: the gate).

The **gate** counts tasks (``--gate tasks``, the default): a variant regresses when it
regressed more tasks than it improved (each task's repeats as its pass rate) with an exact
p below ``--alpha`` (0.05). A task counts once however often it ran, so the repeats of a
deterministic model are not new evidence: ``--repeats 3`` gives the verdict ``--repeats 1``
gives. ``--gate pairs`` is the exact McNemar test over (task, repeat) pairs, which assumes
the repeats independent (:mod:`agentnb.evals.verdict`). The same gate in a test:
:func:`agentnb.testing.assert_no_regression`.

Exit status (:data:`EXIT`): 0 no regression; 1 a regression; 2 a usage or configuration
error, said in one line before any run (a spec that cannot be loaded, a variants factory that
raises, an output path that cannot be written: ``--save``, ``--json`` and ``--junit`` are
checked before the sweep); 3 a crash (the traceback, then one line). ``--save`` is written
first, so a crash after the sweep keeps it. The progress line is rewritten in place on a
terminal and written as whole lines in a log.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import math
import os
import sys
import traceback
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import display
from ..errors import ConfigurationError
from ..storage import dumps
from .ci_options import cli_floor, cli_log, cli_options, variants_of
from .tasks import TaskSet

if TYPE_CHECKING:
    from .comparison import Comparison
    from .evaluation import Evaluation

__all__ = ["EXIT", "add_parser", "load_spec", "load_tasks", "main", "regressed", "run", "writable"]

#: The exit statuses of ``eval`` and ``optimize`` (README: the CI runner).
EXIT = {"ok": 0, "regression": 1, "usage": 2, "crash": 3}
EPILOG = (
    "exit status: 0 ok, 1 a regression (optimize: --require-improvement not met), 2 a usage "
    "or configuration error (said before any run), 3 a crash"
)


def regressed(comparison: Comparison, alpha: float = 0.05) -> bool:
    """Whether ``comparison.other`` is worse than its baseline beyond chance, by the
    comparison's test: more tasks regressed than improved (``"tasks"``), or more paired
    losses than wins (``"pairs"``), with the test's exact p below ``alpha``."""
    p = comparison.p
    if comparison.underpowered:  # within the baseline's noise floor: no verdict
        return False
    return comparison.lost > comparison.won and not math.isnan(p) and p < alpha


def load_spec(spec: str, what: str) -> Any:
    """The object ``module:attribute`` names (called when it is a factory); ``what`` names it
    in errors. Modules are imported from the current directory first."""
    module, _, attribute = spec.partition(":")
    if not module or not attribute:
        raise ConfigurationError(f"{what} must be module:attribute, not {spec!r}")
    if "" not in sys.path and "." not in sys.path:
        sys.path.insert(0, "")  # the project the runner is started in
    try:
        value: Any = importlib.import_module(module)
        for part in attribute.split("."):
            value = getattr(value, part)
    except (ImportError, AttributeError) as exc:
        raise ConfigurationError(f"{what} {spec!r} cannot be loaded: {exc}") from None
    if not callable(value) or hasattr(value, "complete"):
        return value
    try:  # a factory: what it raises is the configuration failing, said in one line
        return value()
    except Exception as exc:
        raise ConfigurationError(f"{what} {spec!r} raised {type(exc).__name__}: {exc}") from None


def writable(path: Path | None) -> None:
    """Refuse an output path that cannot be written (before the work, not after it)."""
    if path is None:
        return
    folder = path.parent
    if path.is_dir():
        why = "it is a folder"
    elif not folder.is_dir():
        why = f"its folder {str(folder)!r} does not exist"
    elif not os.access(folder, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        why = "it is not writable"
    else:
        return
    raise ConfigurationError(f"cannot write {str(path)!r}: {why}")


def load_tasks(spec: str, trust: bool) -> TaskSet:
    """A task file (``.jsonl``) or ``module:attribute`` naming a :class:`TaskSet`."""
    if spec.endswith(".jsonl") or Path(spec).exists():
        return TaskSet.from_jsonl(spec, trust=trust)
    value = load_spec(spec, "tasks")
    if not isinstance(value, TaskSet):
        raise ConfigurationError(f"tasks {spec!r} is a {type(value).__name__}, not a TaskSet")
    return value


def add_parser(sub: Any) -> None:
    """The ``eval`` subcommand of ``python -m agentnb``."""
    e = sub.add_parser(
        "eval", help="evaluate variants on a task set; exit 1 on a regression", epilog=EPILOG
    )
    e.add_argument("tasks", help="a task file (.jsonl) or module:attribute naming a TaskSet")
    e.add_argument("--variants", required=True, help="module:attribute: {name: agent} or a factory")
    e.add_argument("--baseline", help="the variant the others are compared with (default: first)")
    e.add_argument("--repeats", type=int, default=1)
    e.add_argument("--concurrency", type=int, default=8)
    e.add_argument("--seed", type=int, default=0)
    e.add_argument("--timeout", type=float, default=300.0, help="seconds per run")
    e.add_argument("--alpha", type=float, default=0.05, help="the gate's significance level")
    e.add_argument(
        "--gate",
        choices=["tasks", "pairs"],
        default="tasks",
        help="the gate's test: tasks (each task once, its repeats as its pass rate) or pairs "
        "(McNemar over (task, repeat) pairs: assumes repeats independent)",
    )
    e.add_argument("--junit", type=Path, help="write JUnit XML here")
    e.add_argument("--json", type=Path, help="write the records, summary and comparisons here")
    e.add_argument("--save", type=Path, help="save the whole evaluation here (Evaluation.load)")
    e.add_argument(
        "--trust", action="store_true", help="import and run the functions a task file names"
    )
    e.add_argument("--quiet", action="store_true", help="no progress line")
    cli_options(e)


def main(args: argparse.Namespace) -> int:
    """Run the command (see the module docstring for its exit status)."""
    try:
        for path in (args.save, args.json, args.junit):  # before the sweep, not after it
            writable(path)
        variants = variants_of(args.variants, load_spec)  # module:attribute, or a .toml file
        tasks = load_tasks(args.tasks, args.trust)  # after: the modules the variants imported
    except (ConfigurationError, OSError) as exc:
        print(f"agentnb eval: {exc}", file=sys.stderr)
        return EXIT["usage"]
    return crashing("eval", lambda: asyncio.run(run(tasks, variants, args)))


def crashing(command: str, work: Any) -> int:
    """``work()``'s exit status; a crash is its traceback and one line, and status 3 (never
    the regression status)."""
    try:
        return int(work())
    except Exception as exc:
        traceback.print_exc()
        print(f"agentnb {command}: crashed: {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT["crash"]


async def run(tasks: TaskSet, variants: Any, args: argparse.Namespace) -> int:
    from .evaluate import evaluate

    try:
        floor = await cli_floor(variants, tasks, args)  # --noise: the baseline's A/A first
        ev = await evaluate(
            variants,
            tasks,
            args.repeats,
            concurrency=args.concurrency,
            seed=args.seed,
            timeout=args.timeout,
            progress=not args.quiet,
            **cli_log(args),
        )
    except ConfigurationError as exc:
        print(f"agentnb eval: {exc}", file=sys.stderr)
        return EXIT["usage"]
    if args.save:  # first: whatever happens next, the sweep is kept
        ev.save(args.save)
    baseline = args.baseline or getattr(variants, "baseline", None) or ev.variants[0]
    if baseline not in ev.variants:
        print(f"agentnb eval: no variant {baseline!r}; variants: {ev.variants}", file=sys.stderr)
        return EXIT["usage"]
    test = getattr(args, "gate", "tasks")
    comparisons = [
        ev.compare(baseline, v, noise=floor).using(test) for v in ev.variants if v != baseline
    ]
    print(ev.summary.to_string())
    print(ev.summary.attrs["caption"])
    failed = []
    for c in comparisons:
        verdict = "REGRESSION" if regressed(c, args.alpha) else "ok"
        verdict = "UNDERPOWERED" if c.underpowered else verdict  # no verdict within the floor
        print(f"{verdict}: {c!r}")
        if c.regressed:
            print(f"    regressed tasks: {', '.join(c.regressed)}")
        if verdict != "ok":
            failed.append(c.other)
    if args.json:
        write_json(ev, comparisons, args.alpha, args.json)
    if args.junit:
        write_junit(ev, comparisons, args.alpha, args.junit)
    if failed:
        print(f"gate: {', '.join(failed)} regressed against {baseline} (p < {args.alpha})")
        return EXIT["regression"]
    print(f"gate: no regression against {baseline}")
    return EXIT["ok"]


def write_json(ev: Evaluation, comparisons: list[Comparison], alpha: float, path: Path) -> None:
    summary = json.loads(ev.summary.reset_index().to_json(orient="records", force_ascii=False))
    data = {
        "records": [r.to_dict() for r in ev.records],
        "summary": summary,
        "comparisons": [
            {
                **json.loads(c.to_frame().to_json(orient="records"))[0],
                "regressed": regressed(c, alpha),
                "regressed_tasks": c.regressed,
            }
            for c in comparisons
        ],
    }
    path.write_text(dumps(data, indent=1) + "\n", encoding="utf-8")


def write_junit(ev: Evaluation, comparisons: list[Comparison], alpha: float, path: Path) -> None:
    """One ``<testsuite>`` per variant (a test case per run: failed checks as ``<failure>``,
    an error run as ``<error>``) and one ``gate`` suite (a case per comparison). Every name
    and text goes through :func:`_clean`: well-formed XML whatever a task is called."""
    x = _clean
    suites = ET.Element("testsuites", name="agentnb eval")
    for variant in ev.variants:
        runs = [r for r in ev.records if r.variant == variant]
        suite = ET.SubElement(
            suites,
            "testsuite",
            name=x(variant),
            tests=str(len(runs)),
            failures=str(sum(r.outcome == "fail" for r in runs)),
            errors=str(sum(r.outcome == "error" for r in runs)),
            time=f"{sum(r.latency for r in runs):.3f}",
        )
        for r in runs:
            case = ET.SubElement(
                suite,
                "testcase",
                classname=x(f"{ev.tasks.name}.{variant}"),
                name=x(f"{r.task}[{r.repeat}]"),
                time=f"{r.latency:.3f}",
            )
            if r.outcome == "fail":
                why = "; ".join(f"{c.name}: {c.reason}" for c in r.failed_checks)
                ET.SubElement(case, "failure", message=x(why[:500])).text = x(why)
            elif r.outcome == "error":
                ET.SubElement(case, "error", message=x(r.error[:500])).text = x(r.error)
    gate = ET.SubElement(suites, "testsuite", name="gate", tests=str(len(comparisons)))
    failures = 0
    for c in comparisons:
        name = x(f"{c.other} vs {c.baseline}")
        case = ET.SubElement(gate, "testcase", classname="gate", name=name)
        if regressed(c, alpha):
            failures += 1
            ET.SubElement(case, "failure", message=f"regression (p < {alpha})").text = x(repr(c))
        elif c.underpowered:  # within the baseline's noise floor: the gate gives no verdict
            ET.SubElement(case, "skipped", message=x(c.verdict[:500])).text = x(repr(c))
    gate.set("failures", str(failures))
    ET.ElementTree(suites).write(path, encoding="utf-8", xml_declaration=True)


def _clean(text: str) -> str:
    """Text XML 1.0 can hold: control characters and lone surrogates as U+FFFD."""
    shown = display.shown(text)
    return "".join(c if c in "\t\n\r" or " " <= c < "\ufffe" else "\ufffd" for c in shown)
