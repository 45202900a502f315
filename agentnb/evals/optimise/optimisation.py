"""Optimisation: the state of one optimiser run, filled while it runs, read afterwards.

    opt = await an.optimize(agent, tasks, proposer=model, budget=150)
    opt.best                 # the incumbent Candidate: the last one the gate promoted
    opt.best_unproven        # the strongest candidate the gate held (None: none did better)
    opt.best_agent           # the agent with its texts
    opt.candidates           # every candidate, in the order proposed (c0 is the agent as given)
    opt.history              # one row per step: what was proposed, what it cost, what happened
    opt.evaluation           # every run, each candidate a variant (matrix, compare, outputs)
    opt.diff("c3")           # its texts against its parent's, line by line
    opt.save(path); an.evals.Optimisation.load(path); opt.plot()

Subscribers (the live view, the terminal progress line) hear ``(kind, data)`` events:
``"run"`` (a metric call finished), ``"proposal"`` (a proposer's rationale, as soon as it
came), ``"candidate"`` (a candidate was added or changed status), ``"step"`` (a step of the
history), ``"warning"`` (what the run cannot do, said as it learns it) and ``"end"`` (the
reason it stopped). ``cancel()`` (the view's Stop) stops the run:
runs in flight are dropped, the candidate being decided is marked ``stopped`` (unless every
validation run its gate needs had finished: then the gate decides it from those, with no new
run), and the incumbent stays what the gate last proved.
"""

from __future__ import annotations

import asyncio
import os
import warnings
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...display import Shown
from ...errors import ConfigurationError
from ...models import Usage
from ...session import RunRecord
from ..cost import spent
from ..evaluation import Evaluation
from ..tasks import TaskSet
from . import gate
from .budget import BudgetWarning
from .candidate import Candidate
from .gate import RENAMED
from .proposer import off_loop
from .wording import counted

if TYPE_CHECKING:
    import pandas as pd

    from ...agent import Agent
    from ..comparison import Comparison

__all__ = ["Optimisation"]


class Optimisation(Shown):
    """One optimiser run (see the module docstring); made by :func:`agentnb.optimize`."""

    def __init__(
        self,
        agent: Agent | None,
        train: TaskSet,
        validation: TaskSet,
        *,
        proposer: Any = None,
        budget: int = 150,
        minibatch: int = 4,
        repeats: int = 1,
        alpha: float = 0.05,
        gate: str = "tasks",
        seed: int = 0,
        patience: int = 5,
        concurrency: int = 8,
        timeout: float | None = 300.0,
        cache: Any = None,
    ) -> None:
        self.base = agent
        self.train = train
        self.validation = validation
        # a sync function model runs in a thread: one that blocks never holds the loop
        self.proposer = off_loop(proposer) if proposer is not None else None
        #: The proposer's runs, one per question (:func:`.proposer.ask`): their records meter
        #: it, as every run is metered (calls, tokens, cached calls, spend: computed when read).
        self.proposer_runs: list[RunRecord] = []
        self.budget, self.minibatch, self.repeats = budget, minibatch, repeats
        self.alpha, self.seed, self.patience = alpha, seed, patience
        self.gate = RENAMED.get(gate, gate)  # a saved run's former name, read as today's
        self.concurrency, self.timeout, self.cache = concurrency, timeout, cache
        tasks = TaskSet([*train, *validation], name=train.name)
        #: Every run of every candidate (variants named by candidate id).
        self.evaluation = Evaluation({}, tasks, repeats, seed=seed, cache=cache)
        self.candidates: list[Candidate] = []
        #: The incumbent's id: the seed, then each candidate the gate promoted.
        self.best_id = "c0"
        self.steps: list[dict[str, Any]] = []
        #: Metric calls spent so far (one scored task run each).
        self.metric_calls = 0
        #: The proposal being worked on now: {"parent", "rationale", "candidate"}.
        self.current: dict[str, Any] = {}
        self.warnings: list[str] = []
        #: The gate's noise floor (``optimize(noise=...)``), or None.
        self.noise: Any = None
        self.stop_reason = ""
        #: What ended the loop itself when it failed (a bug, not a run's error), else None:
        #: the optimisation is still handed back, with everything decided before it.
        self.error: BaseException | None = None
        self.done = False
        self.cancelled = False
        self._task: asyncio.Task[Any] | None = None
        #: The sweep of the runs in flight (Stop cancels it).
        self.running: Evaluation | None = None
        self._subscribers: list[Callable[[str, Any], Any]] = []

    # -- events ---------------------------------------------------------------------------
    def subscribe(self, callback: Callable[[str, Any], Any]) -> Callable[[], None]:
        """Call ``callback(kind, data)`` for each event from now on (see the module
        docstring); ``("end", reason)`` at once if it already ended. Returns an unsubscriber."""
        self._subscribers.append(callback)
        if self.done:
            self._tell(callback, "end", self.stop_reason)

        def unsubscribe() -> None:
            if callback in self._subscribers:
                self._subscribers.remove(callback)

        return unsubscribe

    def _tell(self, callback: Callable[[str, Any], Any], kind: str, data: Any) -> None:
        try:
            callback(kind, data)
        except Exception as exc:  # a broken view never stops the optimisation
            warnings.warn(
                f"optimisation subscriber {callback!r} raised {exc!r}", RuntimeWarning, stacklevel=2
            )

    def emit(self, kind: str, data: Any) -> None:
        for callback in list(self._subscribers):
            self._tell(callback, kind, data)

    def warn(self, text: str) -> None:
        """Keep ``text`` in ``warnings`` (the summary, the view) and raise it as a
        :class:`BudgetWarning`: what the run can no longer do, said before it spends."""
        self.warnings.append(text)
        self.emit("warning", text)
        warnings.warn(text, BudgetWarning, stacklevel=2)

    # -- driving --------------------------------------------------------------------------
    def drive(self, search: Awaitable[Any]) -> None:
        """Run ``search`` (the loop filling this optimisation) as its background task."""
        self._task = asyncio.ensure_future(search)
        self._task.add_done_callback(self._ended)

    def _ended(self, task: asyncio.Task[Any]) -> None:
        if not task.cancelled() and task.exception() is not None:
            exc = self.error = task.exception()
            assert exc is not None
            self.finish(f"failed: {type(exc).__name__}: {exc}")
        else:
            self.finish("stopped" if self.cancelled else self.stop_reason or "ended")

    def finish(self, reason: str) -> None:
        """Mark the run ended with ``reason`` and tell the subscribers; once only."""
        if self.done:
            return
        self.stop_reason = self.stop_reason or reason
        if self.cancelled:
            self.stop_reason = (
                f"stopped by request after {counted(self.metric_calls, 'metric call')}"
            )
        for c in self.candidates:  # one being decided when it ended
            if c.status == "running":
                c.status, c.reason = "stopped", f"stopped before it was decided: {self.stop_reason}"
                c.decided_at = self.metric_calls  # its point sits where it was stopped, not at 0
                self.emit("candidate", c)
        self.done = True
        self.current = {}
        self.evaluation.finish()
        self.emit("end", self.stop_reason)

    async def wait(self) -> Optimisation:
        """Wait for the run to end (also when stopped); returns ``self``, also when the loop
        itself failed: everything decided before is kept, ``stop_reason`` says ``failed: ...``
        and :attr:`error` holds the exception (nothing is lost to it)."""
        if self._task is not None and not self._task.done():
            try:
                await asyncio.shield(self._task)
            except asyncio.CancelledError:
                if not self.cancelled:
                    raise
            except Exception:
                pass  # kept in self.error
        if self._task is not None and self._task.done() and not self._task.cancelled():
            self._ended(self._task)  # at once (its callback may not have run yet); once only
        return self

    def __await__(self) -> Any:
        return self.wait().__await__()

    def cancel(self) -> None:
        """Stop: runs in flight are dropped; everything decided so far stays."""
        self.cancelled = True
        if self.running is not None:
            self.running.cancel()
        if self._task is not None and not self._task.done():
            self._task.cancel()
        else:
            self.finish("stopped")

    stop = cancel

    # -- reading --------------------------------------------------------------------------
    def candidate(self, cid: str) -> Candidate:
        for c in self.candidates:
            if c.id == cid:
                return c
        raise KeyError(f"no candidate {cid!r}; candidates: {[c.id for c in self.candidates]}")

    @property
    def best(self) -> Candidate:
        """The incumbent: the seed, or the last candidate the gate promoted."""
        return self.candidate(self.best_id)

    @property
    def best_unproven(self) -> Candidate | None:
        """The strongest candidate the gate **held**: better than the incumbent on the
        held-out tasks (the highest validation success, then training success, then the
        earliest), but not proven better — the gate did not promote it. None when no held
        candidate did better there. Its texts are a lead to test on more tasks, not a result;
        ``python -m agentnb optimize --best-unproven`` writes them labelled as unproven."""
        bar = self.best.validation or 0.0
        held = [c for c in self.candidates if c.status == "held" and (c.validation or 0) > bar]
        if not held:
            return None
        return max(held, key=lambda c: (c.validation or 0, c.train_success, -held.index(c)))

    @property
    def best_agent(self) -> Agent:
        """The agent with the incumbent's texts."""
        return self.agent(self.best_id)

    def agent(self, cid: str) -> Agent:
        """The agent with candidate ``cid``'s texts (needs the agent the run started from)."""
        if self.base is None:
            raise ConfigurationError(
                "a loaded optimisation keeps texts, not agents: candidate.agent(your_agent) "
                "puts a candidate's texts on an agent of yours"
            )
        return self.candidate(cid).agent(self.base)

    def diff(self, cid: str, against: str | None = None) -> dict[str, Any]:
        """Candidate ``cid``'s texts against its parent's (or ``against``'s): line diff rows
        of the instructions and of each changed tool description."""
        mine = self.candidate(cid)
        other = against or mine.parent
        if other is None:
            return {}
        return self.candidate(other).texts.diff(mine.texts)

    def compare(self, incumbent: str, candidate: str) -> Comparison:
        """The paired comparison the gate reads for ``candidate`` against ``incumbent``: their
        runs on the validation tasks only, at the optimisation's ``alpha``, read by its gate's
        test (``.verdict``, ``.p``, the tasks improved and regressed: everything of
        ``ev.compare``)."""
        for cid in (incumbent, candidate):
            self.candidate(cid)  # an unknown id is refused by name
        return gate.compare(self, incumbent, candidate)

    @property
    def gated(self) -> int:
        """How many candidates were gated (each a test at ``alpha`` on the same tasks)."""
        return sum(c.gate is not None for c in self.candidates)

    @property
    def family_error(self) -> float:
        """The Bonferroni bound on promoting a candidate that is no better: gated × alpha."""
        return min(1.0, self.gated * self.alpha)

    @property
    def proposer_calls(self) -> int:
        """The proposer's calls that answered (a run stopped in ``call_model`` did not get
        its last reply)."""
        return sum(r.iterations - (r.stage == "call_model") for r in self.proposer_runs)

    @property
    def proposer_usage(self) -> Usage:
        """The tokens the proposer's calls used, from their runs' records."""
        return sum((r.usage for r in self.proposer_runs), Usage())

    @property
    def proposer_tokens(self) -> tuple[int, int]:
        """(prompt, completion) tokens the proposer was billed for (its runs' records)."""
        billed = sum((r.billed for r in self.proposer_runs), Usage())
        return billed.prompt_tokens, billed.completion_tokens

    @property
    def proposer_spend(self) -> float | None:
        """What the proposer's calls cost in USD (None: unknown price); see
        :func:`agentnb.evals.cost.spent`."""
        return spent(self.proposer_runs)

    @property
    def spend(self) -> float:
        """What the task runs cost in USD, every run (NaN when a price is unknown)."""
        from ..tables import spend

        return spend(self.evaluation.records)

    @property
    def history(self) -> pd.DataFrame:
        """One row per step: its event (``skipped``, ``no_proposal``, ``duplicate``,
        ``rejected``, ``pool``, ``promoted``, ``held``, ``stopped``), the parent and the
        candidate, the minibatch, scores, the gate's p, and the metric calls it spent."""
        from .tables import history

        return history(self)

    @property
    def frame(self) -> pd.DataFrame:
        """One row per candidate: lineage, status, scores, validation, the gate's verdict."""
        from .tables import candidates_frame

        return candidates_frame(self)

    def lineage(self, cid: str | None = None) -> list[str]:
        """The ids from the seed down to ``cid`` (the incumbent by default)."""
        chain, at = [], self.candidate(cid or self.best_id)
        while True:
            chain.append(at.id)
            if at.parent is None:
                return chain[::-1]
            at = self.candidate(at.parent)

    def summary(self) -> str:
        """The run in a few plain lines."""
        from .tables import summary

        return summary(self)

    def __repr__(self) -> str:
        state = "done" if self.done else "running"
        best = self.best if self.candidates else None
        val = (
            f", best {best.id} validation {best.validation:.0%}"
            if best and best.validation is not None
            else ""
        )
        return (
            f"<Optimisation {state}: {self.metric_calls}/{self.budget} metric calls, "
            f"{counted(len(self.candidates), 'candidate')}{val}>"
        )

    # -- files ----------------------------------------------------------------------------
    def save(self, path: str | os.PathLike[str], *, traces: bool = False) -> Path:
        """One JSONL file: the optimisation's header line (settings, candidates, history),
        then the evaluation of every run (see :meth:`Evaluation.save`)."""
        from .files import save

        return save(self, Path(path), traces=traces)

    @classmethod
    def load(cls, path: str | os.PathLike[str], *, trust: bool = False) -> Optimisation:
        """Read a file written by :meth:`save` (no model needed: texts, runs and history)."""
        from .files import load

        return load(cls, Path(path), trust=trust)

    # -- pictures and views ---------------------------------------------------------------
    def plot(self, **options: Any) -> Any:
        """Validation success of the incumbent over the metric calls spent, with every
        candidate's training success (matplotlib, imported here only); returns the figure."""
        from .plot import plot

        return plot(self, **options)

    def static_html(self) -> str:
        """Its warnings, summary and candidates (what nbviewer shows; in a kernel with the
        widgets, the live view shows it: :mod:`agentnb.display`)."""
        from .tables import static_html

        return static_html(self)
