"""A candidate: one version of the texts the optimiser edits, where it came from, what it scored.

The texts are what the Playground edits: the instructions and each tool's description
(:class:`Texts`). A candidate is a variant of the agent (``candidate.agent(base)`` is
``base.copy(instructions=..., descriptions=...)``), named ``c0`` (the seed: the agent as
given), ``c1``, ... in the order they were proposed; its runs are in the optimisation's one
:class:`~agentnb.Evaluation` under that name. ``parent`` and ``diff()`` give the lineage.

A candidate's **status** says how far it got, each step a reason to stop:

=============  ===============================================================================
``seed``       the agent as given: evaluated on every training and validation task
``rejected``   no better than its parent on the minibatch (a sum of run scores): nothing more
               spent on it
``pool``       better on the minibatch, then run on every training task: it joins the pool
               (the Pareto front over training tasks chooses parents from it), not gated
               (its training success rate is no higher than the incumbent's)
``promoted``   run on the validation tasks, and the gate said it beats the incumbent there:
               it is the incumbent now (``opt.best``)
``held``       run on the validation tasks, and the gate did not say so: not promoted
``running``    being decided now
``stopped``    the optimisation was stopped, or its budget ran out, before it was decided (a
               Stop after all its validation runs finished gates it from them instead)
=============  ===============================================================================

A run's **score** is 1 when it passed, else the share of its checks that passed (0 for an
error): partial credit lets a step that fixes one of two failing checks show on the
minibatch. The gate reads pass/fail only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ...models import line_diff

if TYPE_CHECKING:
    from ...agent import Agent
    from ..record import EvalRecord

__all__ = ["STATUSES", "Candidate", "Texts", "score"]

STATUSES = ("seed", "rejected", "pool", "promoted", "held", "running", "stopped")


@dataclass(frozen=True)
class Texts:
    """The instructions and the tool descriptions (tool name -> text) of one candidate."""

    instructions: str
    tools: dict[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, agent: Agent) -> Texts:
        return cls(agent.instructions, {t.name: t.description for t in agent.tools})

    def apply(self, agent: Agent) -> Agent:
        """``agent`` with these texts (a copy; ``agent`` is untouched)."""
        current = {t.name: t.description for t in agent.tools}
        changed = {k: v for k, v in self.tools.items() if current.get(k) != v}
        return agent.copy(instructions=self.instructions, descriptions=changed or None)

    def key(self) -> tuple[str, tuple[tuple[str, str], ...]]:
        """Equal for equal texts: the same text is never evaluated twice."""
        return self.instructions, tuple(sorted(self.tools.items()))

    def diff(self, other: Texts) -> dict[str, Any]:
        """What changed from ``self`` to ``other``: ``{"instructions": rows, "tools": {name:
        rows}}`` of :func:`agentnb.models.differ.line_diff` (only what changed)."""
        out: dict[str, Any] = {}
        rows = line_diff(self.instructions, other.instructions)
        if rows:
            out["instructions"] = rows
        tools = {
            n: line_diff(self.tools.get(n), other.tools.get(n))
            for n in dict.fromkeys([*self.tools, *other.tools])
        }
        tools = {n: r for n, r in tools.items() if r}
        if tools:
            out["tools"] = tools
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"instructions": self.instructions, "tools": dict(self.tools)}


def score(record: EvalRecord) -> float:
    """1 for a pass, the share of passed checks for a fail, 0 for an error."""
    if record.outcome == "pass":
        return 1.0
    if record.outcome == "error" or not record.checks:
        return 0.0
    return sum(c.passed for c in record.checks) / len(record.checks)


@dataclass
class Candidate:
    """One version of the texts (see the module docstring)."""

    id: str
    texts: Texts
    parent: str | None = None
    #: Why the proposer wrote it, in the proposer's words (the seed: "the agent as given").
    rationale: str = ""
    status: str = "seed"
    #: Why it has its status, in one line.
    reason: str = ""
    #: Training task -> mean score over its repeats (filled as its runs finish).
    scores: dict[str, float] = field(default_factory=dict)
    #: Training task -> passes / repeats.
    successes: dict[str, float] = field(default_factory=dict)
    #: Validation success rate (None until it ran there).
    validation: float | None = None
    #: The gate's verdict when it was gated: a one-line plain verdict, its p-value, level.
    gate: dict[str, Any] | None = None
    #: Metric calls spent on it, and the optimisation's count when it was decided.
    calls: int = 0
    decided_at: int = 0
    #: Its step in the history (0 for the seed).
    step: int = 0
    #: What the optimiser noted of the proposer's reply (what it ignored, how it read it), in
    #: the optimiser's words: kept apart from the rationale, which may be in another language.
    note: str = ""

    @property
    def train_score(self) -> float:
        return sum(self.scores.values()) / len(self.scores) if self.scores else float("nan")

    @property
    def train_success(self) -> float:
        s = self.successes
        return sum(s.values()) / len(s) if s else float("nan")

    def agent(self, base: Agent) -> Agent:
        """``base`` with this candidate's texts: a variant to run, save or keep."""
        return self.texts.apply(base)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "parent": self.parent,
            "texts": self.texts.to_dict(),
            "rationale": self.rationale,
            "status": self.status,
            "reason": self.reason,
            "scores": self.scores,
            "successes": self.successes,
            "validation": self.validation,
            "gate": self.gate,
            "calls": self.calls,
            "decided_at": self.decided_at,
            "step": self.step,
            "note": self.note,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Candidate:
        fields = dict(data)
        texts = fields.pop("texts")
        return cls(texts=Texts(texts["instructions"], dict(texts.get("tools") or {})), **fields)

    def __repr__(self) -> str:
        val = "" if self.validation is None else f", validation {self.validation:.0%}"
        return (
            f"<Candidate {self.id} ({self.status}) from {self.parent or '—'}: training "
            f"score {self.train_score:.2f}{val}>"
        )
