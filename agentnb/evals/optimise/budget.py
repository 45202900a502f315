"""The budget in metric calls, what it buys, and the warning when it buys too little.

A **metric call** is one task run that is scored (one run of a candidate on one task, one
repeat): the unit GEPA and MLflow budget in. A run reused because the same text already ran
the same task costs none. The proposer's calls are not metric calls: they are counted, with
their tokens and spend, apart.

What each step costs, with ``T`` training and ``V`` validation tasks, minibatch ``m`` and
``r`` repeats:

* the start: the seed candidate on every task, ``(T + V) · r``;
* a proposal the minibatch rejects: ``m · r``;
* a proposal that joins the pool: ``T · r`` (the minibatch, then the other training tasks);
* a proposal that reaches the gate: ``(T + V) · r``.

Before the run, :func:`budget_plan` says how many proposals can reach the gate; fewer than
two draws a :class:`BudgetWarning` (GEPA users hit a budget that allowed one proposal and
stopped, with no word: gepa #375), and a budget below the start's cost is refused. So does
a validation set too small for the gate ever to promote: ``n`` validation tasks that all
favour a candidate give p = 2 · 0.5ⁿ, so at α = 0.05 five tasks can never be enough, however
good the candidate — and repeats do not help, since the gate counts each task once (with
``gate="pairs"`` the unit is a (task, repeat) pair).

After the start, before any proposal is paid for, :func:`seed_warning` reads the agent as
given on the validation tasks: a task it already passes (every repeat) cannot flip to a win,
so with ``k`` tasks left to win the best a candidate can do is p = 2 · 0.5ᵏ. When even that
cannot pass the gate, a :class:`BudgetWarning` says so (13 tasks, 7 held out, the seed
passing 4: at most 3 can flip, p ≥ 0.25): nothing can be promoted, and ``opt.best_unproven``
is what the run can give.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...errors import ConfigurationError
from .. import statistics as st
from ..planning import fewest_flips
from .wording import counted

if TYPE_CHECKING:
    from .optimisation import Optimisation

__all__ = ["BudgetPlan", "BudgetWarning", "budget_plan", "seed_warning"]


class BudgetWarning(UserWarning):
    """The budget allows fewer than two proposals to reach the gate, or the validation set
    is too small for the gate ever to promote (before the run, or once the agent as given
    has run: the tasks it already passes cannot flip)."""


@dataclass(frozen=True)
class BudgetPlan:
    budget: int
    train: int
    validation: int
    minibatch: int
    repeats: int
    alpha: float = 0.05
    gate: str = "tasks"

    @property
    def start(self) -> int:
        return (self.train + self.validation) * self.repeats

    @property
    def gated(self) -> int:
        """The cost of one proposal that reaches the gate."""
        return (self.train + self.validation) * self.repeats

    @property
    def rejected(self) -> int:
        return self.minibatch * self.repeats

    @property
    def proposals(self) -> int:
        """Proposals that can reach the gate after the start."""
        return max(0, (self.budget - self.start) // self.gated)

    def needed(self, proposals: int) -> int:
        return self.start + proposals * self.gated

    @property
    def text(self) -> str:
        return (
            f"with {self.validation} validation tasks, {self.train} training tasks, minibatch "
            f"{self.minibatch} and {counted(self.repeats, 'repeat')}, a budget of "
            f"{counted(self.budget, 'metric call')} allows {counted(self.proposals, 'proposal')} "
            f"to reach the gate (the start costs {self.start}, "
            f"each gated proposal up to {self.gated}, each the minibatch rejects "
            f"{self.rejected})"
        )

    @property
    def warning(self) -> str:
        """The floor warnings ("" when the budget allows two gated proposals or more and the
        validation set can show a win)."""
        found = []
        if self.proposals < 2:
            found.append(
                f"{self.text}: too few to improve anything. Raise the budget to at least "
                f"{self.needed(2)}, or hold out fewer validation tasks"
            )
        need = fewest_flips(self.alpha)
        if self.gate == "tasks" and self.validation < need:
            found.append(
                f"with {counted(self.validation, 'validation task')} the gate can never promote "
                f"at α = {self.alpha:g}: even {counted(self.validation, 'task')} won and none "
                f"lost {'gives' if self.validation == 1 else 'give'} p = "
                f"{min(1.0, 2 * 0.5**self.validation):.3g}. Give it at least "
                f"{need} validation tasks (repeats do not add tasks: the gate counts each once)"
            )
        pairs = self.validation * self.repeats
        if self.gate == "pairs" and pairs < need:
            found.append(
                f"with {counted(self.validation, 'validation task')} × "
                f"{counted(self.repeats, 'repeat')} the gate can never promote "
                f"at α = {self.alpha:g}: even {counted(pairs, 'win')} and no loss give p = "
                f"{min(1.0, 2 * 0.5**pairs):.3g}. Give it at least {need} validation pairs "
                "(more tasks, or repeats)"
            )
        return "; ".join(found)


def budget_plan(
    budget: int,
    train: int,
    validation: int,
    minibatch: int,
    repeats: int,
    alpha: float = 0.05,
    gate: str = "tasks",
) -> BudgetPlan:
    """What ``budget`` buys (see the module docstring); refuses one below the start."""
    if not isinstance(budget, int) or budget < 1:
        raise ConfigurationError(f"budget must be a number of metric calls >= 1, not {budget!r}")
    if minibatch < 1 or repeats < 1:
        raise ConfigurationError("minibatch and repeats must be at least 1")
    plan = BudgetPlan(budget, train, validation, min(minibatch, train), repeats, alpha, gate)
    if budget < plan.start:
        raise ConfigurationError(
            f"a budget of {counted(budget, 'metric call')} cannot pay for the start: the agent "
            f"as given runs every task first ({train} training + {validation} validation × "
            f"{counted(repeats, 'repeat')} = {plan.start}). Raise it to at least "
            f"{plan.needed(2)} for two gated proposals"
        )
    return plan


def seed_warning(opt: Optimisation) -> str:
    """Why no candidate can be promoted, read from the agent as given's validation runs (""
    when one can): the tasks (or pairs) it already passes cannot flip to a win. See the
    module docstring."""
    seed = opt.candidates[0].id
    names = set(opt.validation.names)
    by_task: dict[str, list[bool]] = {}
    for r in opt.evaluation.records:
        if r.variant == seed and r.task in names:
            by_task.setdefault(r.task, []).append(r.passed)
    if len(by_task) < len(names):  # a Stop during the start: nothing to read
        return ""
    gate, alpha, n = opt.gate, opt.alpha, len(names)
    if gate == "bootstrap":  # the best case: the candidate passes every validation run
        rates = [sum(v) / len(v) for v in by_task.values()]
        low, _ = st.paired_bootstrap(rates, [1.0] * n, seed=opt.seed, confidence=1 - alpha)
        if not low > 0:
            return (
                f"the agent as given already passes {sum(rates):.3g} of {n} validation tasks: "
                f"even a candidate passing all of them leaves the paired bootstrap's "
                f"{1 - alpha:.0%} interval at or below 0, so no candidate can be promoted"
                + _advice()
            )
        return ""
    if gate == "pairs":
        runs = [p for v in by_task.values() for p in v]
        passed, total, unit = sum(runs), len(runs), "validation pair"
    else:
        passed, total, unit = sum(all(v) for v in by_task.values()), n, "validation task"
    open_, need = total - passed, fewest_flips(alpha)
    if open_ >= need or total < need:  # it can promote; or too few at all, said before the run
        return ""
    every = " (every repeat)" if gate == "tasks" and opt.repeats > 1 else ""
    flip = (
        "none is left to win"
        if not open_
        else f"at most {open_} can flip to a win, and {open_} won with none lost "
        f"{'gives' if open_ == 1 else 'give'} p = {min(1.0, 2 * 0.5**open_):.3g} ≥ α = {alpha:g}"
    )
    return (
        f"the agent as given already passes {passed} of {counted(total, unit)}{every}: {flip}, "
        "so no candidate can be promoted on these tasks however good" + _advice()
    )


def _advice() -> str:
    return (
        ". Hold out more tasks, or tasks it fails (validation=TaskSet([...])); what this run "
        "can give is opt.best_unproven: the strongest candidate the gate held, unproven"
    )
