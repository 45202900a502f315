"""The DataFrames of an evaluation: runs, summary (per variant) and flakiness (per task).

Each is computed when read, from the rows (:class:`~agentnb.evals.EvalRecord`: views of the
runs' records), each row's figures read once per frame."""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Any

from . import statistics as st
from .record import EvalRecord

if TYPE_CHECKING:
    import pandas as pd

    from ..agent import Agent
    from .evaluation import Evaluation

__all__ = [
    "FLAG",
    "caption",
    "describe",
    "flagged",
    "flakiness_frame",
    "runs_frame",
    "summary_frame",
]

RUN_COLUMNS = [
    "variant",
    "task",
    "repeat",
    "outcome",
    "failed_checks",
    "stop_reason",
    "steps",
    "model_calls",
    "tool_calls",
    "tool_errors",
    "tokens",
    "latency",
    "seed",
    "error",
    "divergence",
    "cached_calls",
    "model",
    "prompt_tokens",
    "completion_tokens",
    "cost",
    "run_id",
    "trace_id",
    "output",
]


def describe(agent: Agent | Any) -> dict[str, Any]:
    """What a variant is, in plain data (kept in saved evaluations)."""
    if not hasattr(agent, "tools"):  # an app (agentnb.evals.App): only what it is
        return {"instructions": "", "model": repr(agent), "model_params": {}, "tools": {}}
    model = agent.model
    return {
        "instructions": agent.instructions,
        "model": getattr(model, "name", None),
        "model_params": {
            k: v for k, v in agent.model_params.items() if isinstance(v, str | int | float | bool)
        },
        "tools": {t.name: t.description for t in agent.tools},
        "max_iterations": agent.max_iterations,
    }


def _ordered(ev: Evaluation) -> list[EvalRecord]:
    variant = {v: i for i, v in enumerate(ev.variants)}
    task = {t: i for i, t in enumerate(ev.tasks.names)}
    return sorted(
        ev.records, key=lambda r: (variant.get(r.variant, 0), task.get(r.task, 0), r.repeat)
    )


def runs_frame(ev: Evaluation) -> pd.DataFrame:
    import pandas as pd

    rows = []
    for r in _ordered(ev):
        row = r.to_dict()
        row["failed_checks"] = "; ".join(
            f"{flagged(ev, c.name)}: {c.reason}" for c in r.failed_checks
        )
        row["cost"] = _usd(row["cost"])
        rows.append({c: row[c] for c in RUN_COLUMNS})
    return pd.DataFrame(rows, columns=RUN_COLUMNS)


def counted(ev: Evaluation, r: EvalRecord) -> bool:
    """Whether ``r`` is in the denominators: always with errors="fail", not if it errored
    with errors="drop"."""
    return ev.errors == "fail" or r.outcome != "error"


def caption(ev: Evaluation) -> str:
    method = (
        "Wilson interval over runs"
        if ev.repeats == 1
        else ("task-clustered bootstrap interval (percentile, tasks resampled whole)")
    )
    rule = (
        'errors count as failures (errors="fail": n includes them)'
        if ev.errors == "fail"
        else 'errors are left out (errors="drop": n excludes them)'
    )
    k = ev.repeats
    short = "; a task with fewer than k runs counted is left out of them" * (ev.errors == "drop")
    partial = ""
    if ev.cancelled and len(ev.records) < ev.total:
        partial = f"PARTIAL: stopped after {len(ev.records)} of {ev.total} runs; "
    flags = "".join(f"; {FLAG} {name} {why}" for name, why in ev.flags.items())
    return (
        f"{partial}success rate with a 95% {method}; {rule}; pass@{k} and pass^{k} are the "
        f"unbiased estimators for k={k}, averaged over tasks{short}; spend in USD at "
        "an.evals.prices (true spend: every run, errors included; spend_completed: runs that "
        f"finished; NaN: a price is unknown){flags}"
    )


#: The mark of a flagged check (a judge that agrees too little with people: ``ev.agreement``).
FLAG = "⚑"


def flagged(ev: Any, name: str) -> str:
    """A check's name as its verdicts show it: marked when the check is flagged."""
    return f"{name} {FLAG}" if name in getattr(ev, "flags", {}) else name


def _per_task(ev: Evaluation, variant: str) -> dict[str, list[EvalRecord]]:
    tasks: dict[str, list[EvalRecord]] = defaultdict(list)
    for r in ev.records:
        if r.variant == variant:
            tasks[r.task].append(r)
    return tasks


def summary_frame(ev: Evaluation) -> pd.DataFrame:
    import pandas as pd

    k = ev.repeats
    rows = []
    figures = {id(r): r.to_dict() for r in ev.records}  # each row read once
    for variant in ev.variants:
        mine = [r for r in ev.records if r.variant == variant]
        used = [r for r in mine if counted(ev, r)]
        n, passed = len(used), sum(r.passed for r in used)
        tasks = _per_task(ev, variant)
        task_passes = [sum(r.passed for r in rs if counted(ev, r)) for rs in tasks.values()]
        task_counts = [sum(counted(ev, r) for r in rs) for rs in tasks.values()]
        if k == 1:
            low, high = st.wilson(passed, n)
        else:
            low, high = st.cluster_bootstrap(task_passes, task_counts, seed=ev.seed)
        at_k = [st.pass_at_k(m, c, k) for c, m in zip(task_passes, task_counts, strict=True)]
        hat_k = [st.pass_hat_k(m, c, k) for c, m in zip(task_passes, task_counts, strict=True)]
        complete = [(c, m) for c, m in zip(task_passes, task_counts, strict=True) if m]
        rs = [figures[id(r)] for r in mine]
        calls = sum(f["tool_calls"] for f in rs)
        rows.append(
            {
                "variant": variant,
                "n": n,
                "runs": len(mine),
                "passed": passed,
                "failed": sum(r.outcome == "fail" for r in mine),
                "errors": sum(r.outcome == "error" for r in mine),
                "success_rate": passed / n if n else st.NAN,
                "ci_low": low,
                "ci_high": high,
                "ci_method": "wilson" if k == 1 else "task_bootstrap",
                f"pass@{k}": _mean(at_k),
                f"pass^{k}": _mean(hat_k),
                "tasks_all": sum(c == m for c, m in complete),
                "tasks_some": sum(0 < c < m for c, m in complete),
                "tasks_none": sum(c == 0 for c, m in complete),
                "mean_steps": _mean([f["steps"] for f in rs]),
                "mean_model_calls": _mean([f["model_calls"] for f in rs]),
                "tool_error_rate": sum(f["tool_errors"] for f in rs) / calls if calls else 0.0,
                "mean_tokens": _mean([f["tokens"] for f in rs]),
                "mean_latency": _mean([f["latency"] for f in rs]),
                "prompt_tokens": sum(f["prompt_tokens"] for f in rs),
                "completion_tokens": sum(f["completion_tokens"] for f in rs),
                "spend": _total([f["cost"] for f in rs]),
                "spend_completed": _total([f["cost"] for f in rs if f["outcome"] != "error"]),
            }
        )
    frame = pd.DataFrame(rows).set_index("variant") if rows else pd.DataFrame()
    frame.attrs["caption"] = caption(ev)
    frame.attrs["errors"] = ev.errors
    frame.attrs["partial"] = ev.cancelled and len(ev.records) < ev.total
    return frame


def _usd(value: float | None) -> float:
    return st.NAN if value is None else value


def spend(records: list[EvalRecord]) -> float:
    """What these runs spent in USD; NaN when any run's price is unknown (a sum that left
    some runs out would look smaller than it is)."""
    return _total([r.cost() for r in records])


def _total(costs: list[float | None]) -> float:
    return st.NAN if any(c is None for c in costs) else float(sum(c or 0.0 for c in costs))


def _mean(values: list[float]) -> float:
    kept = [v for v in values if not st.is_nan(v)]
    return sum(kept) / len(kept) if kept else st.NAN


def flakiness_frame(ev: Evaluation) -> pd.DataFrame:
    import pandas as pd

    rows = []
    for variant in ev.variants:
        tasks = _per_task(ev, variant)
        for task in ev.tasks.names:
            rs = [r for r in tasks.get(task, []) if counted(ev, r)]
            if not rs:
                continue
            c, m = sum(r.passed for r in rs), len(rs)
            answers = {" ".join((r.output or "").split()) for r in rs}
            rows.append(
                {
                    "variant": variant,
                    "task": task,
                    "passed": c,
                    "runs": m,
                    "label": f"{c}/{m}",
                    "kind": "all" if c == m else "none" if c == 0 else "some",
                    "distinct_answers": len(answers),
                }
            )
    columns = ["variant", "task", "passed", "runs", "label", "kind", "distinct_answers"]
    return pd.DataFrame(rows, columns=columns)
