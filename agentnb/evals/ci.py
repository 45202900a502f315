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
the repeats independent (:mod:`agentnb.evals.verdict`). Any regression makes the exit status
1. Usage errors exit 2. The same gate in a test: :func:`agentnb.testing.assert_no_regression`.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import math
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import _json
from ..errors import ConfigurationError
from .ci_options import cli_floor, cli_log, cli_options, variants_of
from .tasks import TaskSet

if TYPE_CHECKING:
    from .comparison import Comparison
    from .evaluation import Evaluation

__all__ = ["add_parser", "load_spec", "load_tasks", "main", "regressed", "run"]


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
    return value() if callable(value) and not hasattr(value, "complete") else value


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
    e = sub.add_parser("eval", help="evaluate variants on a task set; exit 1 on a regression")
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
    e.add_argument("--trust", action="store_true", help="run checks a task file kept by source")
    e.add_argument("--quiet", action="store_true", help="no progress line")
    cli_options(e)


def main(args: argparse.Namespace) -> int:
    try:
        tasks = load_tasks(args.tasks, args.trust)
        variants = variants_of(args.variants, load_spec)  # module:attribute, or a .toml file
    except (ConfigurationError, OSError) as exc:
        print(f"agentnb eval: {exc}", file=sys.stderr)
        return 2
    return asyncio.run(run(tasks, variants, args))


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
        return 2
    baseline = args.baseline or getattr(variants, "baseline", None) or ev.variants[0]
    if baseline not in ev.variants:
        print(f"agentnb eval: no variant {baseline!r}; variants: {ev.variants}", file=sys.stderr)
        return 2
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
    if args.junit:
        write_junit(ev, comparisons, args.alpha, args.junit)
    if args.json:
        write_json(ev, comparisons, args.alpha, args.json)
    if args.save:
        ev.save(args.save)
    if failed:
        print(f"gate: {', '.join(failed)} regressed against {baseline} (p < {args.alpha})")
        return 1
    print(f"gate: no regression against {baseline}")
    return 0


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
    path.write_text(_json.dumps(data, indent=1) + "\n", encoding="utf-8")


def write_junit(ev: Evaluation, comparisons: list[Comparison], alpha: float, path: Path) -> None:
    """One ``<testsuite>`` per variant (a test case per run: failed checks as ``<failure>``,
    an error run as ``<error>``) and one ``gate`` suite (a case per comparison)."""
    suites = ET.Element("testsuites", name="agentnb eval")
    for variant in ev.variants:
        runs = [r for r in ev.records if r.variant == variant]
        suite = ET.SubElement(
            suites,
            "testsuite",
            name=variant,
            tests=str(len(runs)),
            failures=str(sum(r.outcome == "fail" for r in runs)),
            errors=str(sum(r.outcome == "error" for r in runs)),
            time=f"{sum(r.latency for r in runs):.3f}",
        )
        for r in runs:
            case = ET.SubElement(
                suite,
                "testcase",
                classname=f"{ev.tasks.name}.{variant}",
                name=f"{r.task}[{r.repeat}]",
                time=f"{r.latency:.3f}",
            )
            if r.outcome == "fail":
                why = "; ".join(f"{c.name}: {c.reason}" for c in r.failed_checks)
                ET.SubElement(case, "failure", message=_clean(why[:500])).text = _clean(why)
            elif r.outcome == "error":
                ET.SubElement(case, "error", message=_clean(r.error[:500])).text = _clean(r.error)
    gate = ET.SubElement(suites, "testsuite", name="gate", tests=str(len(comparisons)))
    failures = 0
    for c in comparisons:
        case = ET.SubElement(gate, "testcase", classname="gate", name=f"{c.other} vs {c.baseline}")
        if regressed(c, alpha):
            failures += 1
            ET.SubElement(case, "failure", message=f"regression (p < {alpha})").text = repr(c)
        elif c.underpowered:  # within the baseline's noise floor: the gate gives no verdict
            ET.SubElement(case, "skipped", message=_clean(c.verdict[:500])).text = repr(c)
    gate.set("failures", str(failures))
    ET.ElementTree(suites).write(path, encoding="utf-8", xml_declaration=True)


def _clean(text: str) -> str:
    """Text XML 1.0 can hold: control characters and lone surrogates as U+FFFD."""
    shown = _json.shown(text)
    return "".join(c if c in "\t\n\r" or " " <= c < "\ufffe" else "\ufffd" for c in shown)
