"""The optimiser: prompts and tool descriptions that improve themselves, proven on held-out tasks.

    opt = await an.optimize(agent, tasks, proposer=model, budget=150, seed=0)
    opt.best; opt.best_agent; opt.candidates; opt.history; opt.diff("c2"); opt.plot()
    opt = an.evals.optimise.start(...)      # in the background: await opt / opt.cancel()

GEPA's idea (arXiv 2507.19457: reflect in words on failed runs, keep a Pareto front of
candidates over tasks, try each proposal on a minibatch first) done the agentnb way: every
candidate is a variant with its runs kept in one :class:`~agentnb.Evaluation`, the proposer
is any agentnb model (its calls metered apart), and **a candidate replaces the incumbent
only when the paired comparison on held-out validation tasks says so** at a stated level.
The budget is in metric calls (scored task runs), checked before every step, with a warning
when it is too small to do anything.

Modules: ``candidate`` (texts, lineage, status, scores), ``front`` (the Pareto front, parent
choice), ``proposer`` (the reflection request and reading the reply), ``gate`` (promotion),
``budget`` (what a budget buys; the floor warning), ``loop`` (the search), ``optimisation``
(its state and results, save/load), ``start`` (``optimize``, ``start``, the split),
``view`` and ``plot``.
"""

from .budget import BudgetPlan, BudgetWarning, budget_plan
from .candidate import STATUSES, Candidate, Texts
from .optimisation import Optimisation
from .proposer import REFLECT, Proposal, parse_reply
from .start import optimize, split, start

__all__ = [
    "REFLECT",
    "STATUSES",
    "BudgetPlan",
    "BudgetWarning",
    "Candidate",
    "Optimisation",
    "Proposal",
    "Texts",
    "budget_plan",
    "optimize",
    "parse_reply",
    "split",
    "start",
]
