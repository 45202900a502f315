"""Playground: edit the instructions and tool descriptions, Run, and see whether it helped.

    pg = an.widgets.Playground(agent, an.travel.task_set(), repeats=3)
    pg                       # text areas, Run, Stop; the summary and the paired comparison

Each Run evaluates the current text as a new variant (``v0``, ``v1``, ...) against the task
set in the background (the view stays responsive, Stop cancels the sweep), reusing every run
already done, so only the new variant runs. The result: the summary of every variant so far,
the paired comparison of the new variant with the previous one (its verdict, tasks improved
and regressed, the exact test over tasks, a bootstrap interval), and a trajectory diff for
each task that flipped. Against TravelModel the stand-in's rule table (and what it understood
of the text, where it can say) is shown beside, and what it understood of the text being
edited, updated as you type. From code,
``await pg.run(instructions=..., descriptions={...})`` does the same, and the text areas
follow it: they show the text of the variant being run (also in a view displayed later), so
the next Run from the browser starts from what was last run, never from a stale ``v0``.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ..evals.evaluate import start
from ..evals.trajectory import Trajectory, align
from . import payload
from .base import Widget
from .evals import step_payload, summary_rows

__all__ = ["Playground"]


class Playground(Widget):
    """Exploratory prompt tuning in one widget (see the module docstring).

    Args:
        agent: the starting point; its instructions and tool descriptions fill the text areas.
        tasks: an :class:`~agentnb.TaskSet` (or tasks) to evaluate each variant on.
        repeats, seed, concurrency, errors: as for :func:`agentnb.evaluate`.
    """

    def __init__(
        self,
        agent: Any,
        tasks: Any,
        *,
        repeats: int = 1,
        seed: int = 0,
        concurrency: int = 8,
        errors: str = "fail",
    ) -> None:
        self.agent = agent
        self.tasks = tasks
        self.options: dict[str, Any] = {
            "repeats": repeats,
            "seed": seed,
            "concurrency": concurrency,
            "errors": errors,
        }
        #: Every variant run so far, in order (name -> agent).
        self.variants: dict[str, Any] = {}
        #: The latest evaluation (it holds every variant so far).
        self.evaluation: Any = None
        self.comparison: Any = None
        self._trajectories: dict[str, Trajectory] = {}
        self._task: asyncio.Future[Any] | None = None
        self._running = ""
        super().__init__(kind="playground", data=self.state())

    # -- state ----------------------------------------------------------------------------
    def texts(self, agent: Any = None) -> dict[str, Any]:
        agent = agent or self.agent
        return {
            "instructions": agent.instructions,
            "tools": [{"name": t.name, "description": t.description} for t in agent.tools],
        }

    def latest(self) -> Any:
        """The agent whose texts the text areas show: the last variant run (the agent given
        before any Run). A Run diffs against it."""
        return list(self.variants.values())[-1] if self.variants else self.agent

    def state(self) -> dict[str, Any]:
        return {
            **self.texts(self.latest()),
            "variants": list(self.variants),
            "tasks": len(self.tasks),
            "repeats": self.options["repeats"],
            "rules": _rules(self.agent),
            "understands": callable(getattr(self.agent.model, "understood", None)),
        }

    # -- running --------------------------------------------------------------------------
    async def run(
        self, *, instructions: str | None = None, descriptions: dict[str, str] | None = None
    ) -> Any:
        """Evaluate the text as a new variant and compare it with the previous one."""
        base = self.latest()
        changed = {
            name: text
            for name, text in (descriptions or {}).items()
            if text != next((t.description for t in base.tools if t.name == name), text)
        }
        variant = base.copy(
            instructions=base.instructions if instructions is None else instructions,
            descriptions=changed or None,
        )
        name = f"v{len(self.variants)}"
        keep = [] if self.evaluation is None else self._kept(self.evaluation)
        variants = {**self.variants, name: variant}
        ev = start(variants, self.tasks, keep=keep, **self.options)
        self.evaluation = ev
        self._running = name
        self._post(
            {
                "op": "running",
                "variant": name,
                "total": self._own_total(ev),
                "texts": self.texts(variant),
            }
        )
        ev.subscribe(self._on_record)
        try:
            await ev.wait()
        finally:
            if ev.cancelled:  # Stop discards the variant: the next Run takes its name
                self.evaluation = _previous(ev, self.variants)
            else:
                self.variants[name] = variant
            self._finish(ev, name)
        return ev

    @staticmethod
    def _kept(ev: Any) -> list[tuple[Any, ...]]:
        return [(r, *ev.kept(r)) for r in ev.records]

    @staticmethod
    def _own_total(ev: Any) -> int:
        """The runs of the variant being run: tasks × repeats (earlier variants' are kept)."""
        return int(len(ev.tasks) * ev.repeats)

    def _on_record(self, record: Any) -> None:
        ev = self.evaluation
        if record is not None and ev is not None:
            mine = sum(r.variant == self._running for r in ev.records)
            self._post(
                {
                    "op": "progress",
                    "variant": self._running,
                    "finished": mine,
                    "total": self._own_total(ev),
                }
            )

    def _finish(self, ev: Any, name: str) -> None:
        names = list(self.variants)
        ev = self.evaluation if ev.cancelled and self.evaluation is not None else ev
        msg: dict[str, Any] = {
            "op": "result",
            "variant": name,
            "variants": names,
            "cancelled": name not in self.variants,
            "summary": summary_rows(ev) if ev.records else [],
            "caption": ev.summary.attrs.get("caption", "") if ev.records else "",
        }
        self.comparison = None
        self._trajectories = {}
        if len(names) >= 2 and name in self.variants:
            previous = names[-2]
            c = self.comparison = ev.compare(previous, name)
            msg["comparison"] = {
                "baseline": previous,
                "other": name,
                "pairs": c.pairs,
                "wins": c.wins,
                "losses": c.losses,
                "ties": c.ties,
                "difference": c.difference,
                "p": c.p,
                "method": c.method,
                "significant": c.significant,
                "verdict": c.verdict,
                "mcnemar_p": c.mcnemar_p,
                "ci_low": c.ci_low,
                "ci_high": c.ci_high,
                "ci_method": c.ci_method,
                "improved": c.improved,
                "regressed": c.regressed,
                "repeats": {t: self.flipped_repeat(t) for t in [*c.improved, *c.regressed]},
                "prompt_diff": c.prompt_diff,
            }
        self.data = {**self.state(), "last": msg}
        self._post(msg)

    def flipped_repeat(self, task: str) -> int:
        """The repeat of ``task`` whose outcome flipped between the previous variant and the
        latest, in the direction the task moved (improved: fail → pass); repeat 0 when none
        did."""
        comparison = self.comparison
        improved = comparison is not None and task in comparison.improved
        for t, repeat, before, after in comparison.flips if comparison is not None else ():
            if t == task and (after == "pass") == improved and (before == "pass") != improved:
                return int(repeat)
        return 0

    def flipped_diff(self, task: str) -> Trajectory:
        """The trajectory diff of ``task`` between the previous variant and the latest, on
        the repeat that flipped (:meth:`flipped_repeat`)."""
        found = self._trajectories.get(task)
        if found is None:
            names = list(self.variants)[-2:]
            repeat = self.flipped_repeat(task)
            ev = self.evaluation
            sessions = [ev.session(n, task, repeat) for n in names]
            records = [ev.record(n, task, repeat) for n in names]
            labels = [f"{n} #{repeat}" if ev.repeats > 1 else n for n in names]
            found = self._trajectories[task] = align(sessions, labels, records)
        return found

    def _post(self, msg: dict[str, Any]) -> None:
        self.send(payload.displayable(msg))

    # -- the browser ----------------------------------------------------------------------
    def _on_msg(self, content: dict[str, Any]) -> Any:
        op = content.get("op")
        if op == "run":
            if self._task is not None and not self._task.done():
                raise RuntimeError("a sweep is running: Stop it, or wait for it to finish")
            descriptions = {str(k): str(v) for k, v in (content.get("tools") or {}).items()}
            self._task = asyncio.ensure_future(
                self._guarded(str(content.get("instructions", "")), descriptions)
            )
            return None
        if op == "stop":
            if self.evaluation is not None:
                self.evaluation.cancel()
            return None
        if op == "understood":  # what the model reads in the text being typed (debounced)
            descriptions = {str(k): str(v) for k, v in (content.get("tools") or {}).items()}
            table = self.agent.model.understood(
                self.agent, instructions=str(content.get("instructions", "")),
                descriptions=descriptions)  # fmt: skip
            return payload.displayable(table.payload())
        if op == "diff":
            return payload.displayable(self.flipped_diff(str(content["task"])).payload())
        if op == "step":
            return step_payload(self.flipped_diff(str(content["task"])), content)
        raise ValueError(f"unknown message from the playground: {content!r}")

    async def _guarded(self, instructions: str, descriptions: dict[str, str]) -> None:
        try:
            await self.run(instructions=instructions, descriptions=descriptions)
        except Exception as exc:  # shown in the view, kept in .errors
            self.report(exc)

    def __repr__(self) -> str:
        return f"<Playground: {len(self.variants)} variants over {len(self.tasks)} tasks>"


def _previous(ev: Any, variants: dict[str, Any]) -> Any:
    """The evaluation of the variants before a cancelled Run (None if there were none)."""
    if not variants:
        return None
    return ev.subset(variants)


def _rules(agent: Any) -> list[dict[str, Any]]:
    """The stand-in model's rule table as rows (empty for any other model)."""
    rules = getattr(agent.model, "rules", None)
    if rules is None:
        return []
    try:
        frame = rules().frame
    except Exception:  # a model whose rules() is not the stand-in's table
        return []
    return [{str(k): str(v) for k, v in row.items()} for row in frame.to_dict("records")]
