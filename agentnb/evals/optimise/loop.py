"""The optimiser's loop: GEPA's reflect-and-mutate search, with a gate on held-out tasks.

1. **Start.** The agent as given (candidate ``c0``) runs every training and validation task;
   when the validation tasks it already passes leave nothing the gate could promote, a
   :class:`~.budget.BudgetWarning` says so before any proposal is paid for.
2. **Choose a parent** from the Pareto front over training tasks (:mod:`.front`), and the
   next **minibatch** of training tasks (an epoch at a time, in a seeded shuffle).
3. **Reflect.** The parent's failed runs on the minibatch (already run: no new metric call)
   go to the proposer with the current texts (:mod:`.proposer`); its reply is a new text.
   No failure on this minibatch, no usable reply, or a text already tried: nothing is run,
   and after ``patience`` such steps in a row the run ends.
4. **Minibatch.** The child runs the minibatch; not better than the parent there (the sum
   of run scores, :func:`.candidate.score`): ``rejected``.
5. **Pool.** Better: it runs the other training tasks and joins the pool (the front).
6. **Gate.** If its training success rate beats the incumbent's, it runs the validation
   tasks, and the gate (:mod:`.gate`) compares it with the incumbent there, pair by pair:
   ``promoted`` (the new incumbent) or ``held``.

The proposer never sees a validation task: they are held out for the gate alone. Every
step checks the budget first and spends only what is left, so the run never goes over it.
One seed fixes the split, the parent draws, the minibatches and the runs' seeds: on a
deterministic model (the stand-in) a run reproduces exactly.
"""

from __future__ import annotations

import asyncio
import random
from typing import TYPE_CHECKING, Any

from ..evaluate import start as start_evaluation
from ..tasks import Task, TaskSet
from .budget import seed_warning
from .candidate import Candidate, score
from .front import front, select_parent
from .gate import compare, decide
from .logged import seed_floor
from .proposer import ask
from .wording import counted

if TYPE_CHECKING:
    from .optimisation import Optimisation

__all__ = ["search"]


def left(opt: Optimisation) -> int:
    return opt.budget - opt.metric_calls


async def run(opt: Optimisation, cand: Candidate, tasks: list[Task]) -> None:
    """Run ``cand`` on ``tasks`` (× repeats) and file its runs; each is a metric call."""
    if not tasks:
        return
    assert opt.base is not None
    if cand.id not in opt.evaluation.variants:
        opt.evaluation.add_variant(cand.id, cand.agent(opt.base))
    agent = opt.evaluation.agents[cand.id]
    sub = start_evaluation(
        {cand.id: agent},
        TaskSet(tasks, name=opt.train.name),
        opt.repeats,
        concurrency=opt.concurrency,
        seed=opt.seed,
        timeout=opt.timeout,
        cache=opt.cache,
        progress=False,
        log=False,  # the optimisation is recorded whole when it ends
    )
    opt.running = sub

    def filed(record: Any) -> None:
        if record is None:
            return
        opt.evaluation.add(record, *sub.kept(record))
        opt.metric_calls += 1
        cand.calls += 1
        opt.emit("run", record)

    sub.subscribe(filed)
    try:
        await sub.wait()
    finally:
        opt.running = None
    _score(opt, cand)
    if opt.cancelled:  # Stop: the sweep swallowed the cancellation; end the loop here
        raise asyncio.CancelledError


def _score(opt: Optimisation, cand: Candidate) -> None:
    """The candidate's scores and successes per training task, and its validation rate."""
    mine = [r for r in opt.evaluation.records if r.variant == cand.id]
    train = set(opt.train.names)
    by_task: dict[str, list[Any]] = {}
    for r in mine:
        by_task.setdefault(r.task, []).append(r)
    for task, rs in by_task.items():
        if task in train and len(rs) == opt.repeats:
            cand.scores[task] = sum(score(r) for r in rs) / len(rs)
            cand.successes[task] = sum(r.passed for r in rs) / len(rs)
    val = [r for r in mine if r.task in set(opt.validation.names)]
    if len(val) == len(opt.validation) * opt.repeats:
        cand.validation = sum(r.passed for r in val) / len(val)


def _step(opt: Optimisation, event: str, reason: str, **fields: Any) -> dict[str, Any]:
    row = {
        "step": len(opt.steps) + 1,
        "event": event,
        "reason": reason,
        "calls_used": opt.metric_calls,
        "proposer_calls": opt.proposer_calls,
        **fields,
    }
    opt.steps.append(row)
    opt.emit("step", row)
    return row


def _decided(opt: Optimisation, cand: Candidate, status: str, reason: str) -> None:
    cand.status, cand.reason, cand.decided_at = status, reason, opt.metric_calls
    opt.emit("candidate", cand)


def _next_batch(opt: Optimisation, rng: random.Random, order: list[Task]) -> list[Task]:
    size = min(opt.minibatch, len(opt.train))
    if len(order) < size:
        fresh = list(opt.train)
        rng.shuffle(fresh)
        order.extend(t for t in fresh if t not in order)
    batch, order[:] = order[:size], order[size:]
    return batch


async def search(opt: Optimisation) -> None:
    """The loop of the module docstring, until the budget, the patience or a Stop ends it."""
    train_names = opt.train.names
    seed = opt.candidates[0]
    await run(opt, seed, [*opt.train, *opt.validation])
    _decided(opt, seed, "seed", "the agent as given")
    runs = [r for r in opt.evaluation.records if r.variant == seed.id]
    if runs and all(r.outcome == "error" for r in runs):  # no text can fix a broken setup
        opt.stop_reason = (
            f"every run of the agent as given was an error, so no proposal could be judged; "
            f"the first: {runs[0].error}"
        )
        return
    seed_floor(opt)  # noise=True: the seed's own validation repeats are the floor
    why = seed_warning(opt)  # before any proposal is paid for: can anything be promoted?
    if why:
        opt.warn(why)
    rng = random.Random(opt.seed)
    order: list[Task] = []
    idle = 0
    while True:
        batch_cost = min(opt.minibatch, len(opt.train)) * opt.repeats
        if left(opt) < batch_cost:
            opt.stop_reason = (
                f"budget spent: {counted(left(opt), 'metric call')} left, a minibatch costs "
                f"{batch_cost}"
            )
            return
        if idle >= opt.patience:
            why = "has run out of ideas for these failures"
            last = [s.get("reason", "") for s in opt.steps[-idle:]]
            broken = ("the proposer failed", "the proposer did not answer")  # a key, a server
            if all(r.startswith(broken) for r in last):
                why = f"never answered usefully: {last[-1].removeprefix('the proposer ')}"
            opt.stop_reason = (
                f"nothing new in {counted(idle, 'step')} in a row (patience={opt.patience}): "
                "the proposer " + why
            )
            return
        pool = [c for c in opt.candidates if c.status in ("seed", "pool", "promoted", "held")]
        weights = front(pool, train_names)
        if not weights:  # only when runs of the seed are missing (a Stop during the start)
            opt.stop_reason = "no candidate has a score on every training task"
            return
        if all(all(opt.candidate(i).scores[t] == 1.0 for t in train_names) for i in weights):
            opt.stop_reason = "every training task passes: nothing left to learn from"
            return
        parent = opt.candidate(select_parent(pool, train_names, rng))
        batch = _next_batch(opt, rng, order)
        names = [t.name for t in batch]
        proposal = await ask(opt, parent, batch)
        if proposal is None:
            idle += 1
            _step(
                opt,
                "skipped",
                f"{parent.id} passes this minibatch",
                parent=parent.id,
                minibatch=names,
            )
            continue
        if proposal.texts is None:
            idle += 1
            _step(opt, "no_proposal", proposal.problem, parent=parent.id, minibatch=names)
            continue
        same = next((c for c in opt.candidates if c.texts.key() == proposal.texts.key()), None)
        if same is not None:
            idle += 1
            _step(
                opt, "duplicate", f"the same text as {same.id}", parent=parent.id, minibatch=names
            )
            continue
        idle = 0
        child = Candidate(
            f"c{len(opt.candidates)}",
            proposal.texts,
            parent.id,
            proposal.rationale,
            status="running",
            step=len(opt.steps) + 1,
        )
        child.note = proposal.problem  # the optimiser's words, apart from the proposer's
        opt.candidates.append(child)
        opt.current = {"parent": parent.id, "rationale": child.rationale, "candidate": child.id}
        opt.emit("candidate", child)
        await _decide(opt, parent, child, batch)
        if opt.stop_reason:
            return


async def _decide(
    opt: Optimisation, parent: Candidate, child: Candidate, batch: list[Task]
) -> None:
    """Steps 4 to 6 for one child."""
    names = [t.name for t in batch]
    spent = opt.metric_calls
    step: dict[str, Any] = {"parent": parent.id, "candidate": child.id, "minibatch": names}
    await run(opt, child, batch)
    mine = sum(child.scores[t] for t in names)
    theirs = sum(parent.scores[t] for t in names)
    step.update(parent_score=theirs, candidate_score=mine)
    if mine <= theirs:
        why = f"minibatch score {mine:.2f} ≤ {parent.id}'s {theirs:.2f}"
        _decided(opt, child, "rejected", why)
        _step(opt, "rejected", why, metric_calls=opt.metric_calls - spent, **step)
        return
    rest = [t for t in opt.train if t.name not in names]
    if left(opt) < len(rest) * opt.repeats:
        opt.stop_reason = "budget spent: it cannot pay for the other training tasks"
        why = "better on the minibatch; " + opt.stop_reason
        _decided(opt, child, "stopped", why)
        _step(opt, "stopped", why, metric_calls=opt.metric_calls - spent, **step)
        return
    await run(opt, child, rest)
    incumbent = opt.best
    step["train_success"] = child.train_success
    if child.train_success <= incumbent.train_success:
        why = (
            f"training success {child.train_success:.0%} ≤ the incumbent {incumbent.id}'s "
            f"{incumbent.train_success:.0%}: in the pool, not gated"
        )
        _decided(opt, child, "pool", why)
        _step(opt, "pool", why, metric_calls=opt.metric_calls - spent, **step)
        return
    if left(opt) < len(opt.validation) * opt.repeats:
        opt.stop_reason = "budget spent: it cannot pay for the validation tasks"
        why = "better on training; " + opt.stop_reason
        _decided(opt, child, "pool", why)
        _step(opt, "pool", why, metric_calls=opt.metric_calls - spent, **step)
        return
    try:
        await run(opt, child, list(opt.validation))
    except asyncio.CancelledError:  # a Stop: gate it if every validation run had finished
        _score(opt, child)
        if child.validation is not None:
            _gate(opt, incumbent, child, step, spent, "; decided after the stop, from its runs")
        raise  # else it stays 'running', marked 'stopped' when the run ends
    _gate(opt, incumbent, child, step, spent)


def _gate(
    opt: Optimisation,
    incumbent: Candidate,
    child: Candidate,
    step: dict[str, Any],
    spent: int,
    note: str = "",
) -> None:
    """Step 6: the gate on the validation runs ``child`` has (all of them), no new run."""
    gate = child.gate = decide(compare(opt, incumbent.id, child.id), opt.gate)
    step.update(validation=child.validation, p=gate["p"])
    if gate["promoted"]:
        opt.best_id = child.id
        why = f"promoted over {incumbent.id}: {gate['verdict']}{note}"
        _decided(opt, child, "promoted", why)
    else:
        why = (
            f"held, not promoted over {incumbent.id} ({gate['rule']}: not met): "
            f"{gate['verdict']}{note}"
        )
        _decided(opt, child, "held", why)
    _step(opt, child.status, why, metric_calls=opt.metric_calls - spent, **step)
