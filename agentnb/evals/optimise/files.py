"""An optimisation in one JSONL file: its header line, then the evaluation of every run.

Line 1 holds the format, the settings, the split (task names), every candidate (texts,
lineage, status, scores, the gate's verdict), the history, the incumbent and the records of
the proposer's runs (its figures are read from them); the lines after it are
:meth:`Evaluation.save`'s, so the task runs load with their records and sessions. No model
is needed to load it. A file of the earlier format (``agentnb.optimisation/1``, the
proposer's figures copied: its model, calls and tokens) loads too: those figures become the
record of one run that made those calls; saving writes this format.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ...errors import ConfigurationError
from ...session import RunRecord, new_run_id, new_trace_id
from ...storage import dumps, write_atomically
from ..evaluation import Evaluation
from ..saving import dump, load_lines, read_lines
from ..tasks import TaskSet
from .candidate import Candidate

if TYPE_CHECKING:
    from .optimisation import Optimisation

__all__ = ["FORMAT", "SETTINGS", "header", "load", "restore", "save"]

FORMAT = "agentnb.optimisation/2"
_OLD = "agentnb.optimisation/1"

#: The settings an optimisation keeps (and saves): keywords of ``Optimisation(...)``.
SETTINGS = (
    "budget",
    "minibatch",
    "repeats",
    "alpha",
    "gate",
    "seed",
    "patience",
    "concurrency",
    "timeout",
)

Opt = TypeVar("Opt", bound="Optimisation")


def header(opt: Optimisation) -> dict[str, Any]:
    """What an optimisation keeps besides its evaluation's runs (its file's first line, its
    entry in the experiment log)."""
    return {
        "format": FORMAT,
        "settings": {k: getattr(opt, k) for k in SETTINGS},
        "train": opt.train.names,
        "validation": opt.validation.names,
        "candidates": [c.to_dict() for c in opt.candidates],
        "steps": opt.steps,
        "best": opt.best_id,
        "metric_calls": opt.metric_calls,
        "stop_reason": opt.stop_reason,
        "warnings": opt.warnings,
        "proposer_runs": [r.to_dict() for r in opt.proposer_runs],
    }


def save(opt: Optimisation, path: Path, *, traces: bool = False) -> Path:
    body = [dumps(header(opt)), *dump(opt.evaluation, traces=traces)]
    return write_atomically(path, "\n".join(body) + "\n")


def load(cls: type[Opt], path: Path, *, trust: bool = False) -> Opt:
    """An optimisation of class ``cls`` (:class:`Optimisation`, given by its ``load``) as
    :func:`save` wrote it. A file that is not one, or whose header is damaged (an unknown
    setting, a candidate without texts, a task its runs lack), is refused with a
    ConfigurationError naming what is wrong (as a saved evaluation's lines are)."""
    lines = read_lines(path)
    try:
        header = json.loads(lines[0][1])
        ok = isinstance(header, dict) and header.get("format") in (FORMAT, _OLD)
    except (IndexError, ValueError):
        ok = False
    if not ok:
        raise ConfigurationError(
            f"{path} is not a saved optimisation; this agentnb reads {FORMAT} and {_OLD}"
        )
    ev = load_lines(Evaluation, lines[1:], path, trust=trust)
    try:
        return restore(cls, header, ev, f"{path}:1")
    except ConfigurationError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError) as exc:  # said as a damaged file
        why = f"{path}:1: the optimisation's header is damaged ({exc!r})"
        raise ConfigurationError(why) from None


def restore(
    cls: type[Opt], header: dict[str, Any], ev: Evaluation, where: str = "a saved optimisation"
) -> Opt:
    """The optimisation :func:`header` describes, its runs those of ``ev``: each part checked,
    what is wrong named (``where``: the file and its line)."""

    def damaged(what: str) -> ConfigurationError:
        return ConfigurationError(f"{where}: the optimisation's header is damaged: {what}")

    split = {}
    for side in ("train", "validation"):
        names = header.get(side)
        if not isinstance(names, list):
            raise damaged(f"{side!r} is not a list of task names")
        unknown = [n for n in names if n not in ev.tasks]
        if unknown:
            raise damaged(f"its {side} tasks name {unknown[0]!r}, which the file's tasks lack")
        split[side] = TaskSet([ev.tasks[n] for n in names], name=ev.tasks.name)
    settings = header.get("settings")
    if not isinstance(settings, dict):
        raise damaged("'settings' is not an object")
    unknown = sorted(set(settings) - set(SETTINGS))
    if unknown:
        raise damaged(f"unknown setting {unknown[0]!r} (the settings: {', '.join(SETTINGS)})")
    opt = cls(None, split["train"], split["validation"], **settings)
    opt.evaluation = ev
    candidates = header.get("candidates")
    if not isinstance(candidates, list) or not candidates:
        raise damaged("'candidates' is not a list of candidates")
    for i, c in enumerate(candidates):
        texts = c.get("texts") if isinstance(c, dict) else None
        if not isinstance(texts, dict) or not isinstance(texts.get("instructions"), str):
            raise damaged(f"candidate {i} has no texts (instructions and tools)")
        try:
            opt.candidates.append(Candidate.from_dict(c))
        except TypeError as exc:
            raise damaged(f"candidate {i} cannot be read ({exc})") from None
    opt.steps = list(header.get("steps") or [])
    opt.best_id = str(header.get("best") or "c0")
    if opt.best_id not in {c.id for c in opt.candidates}:
        raise damaged(f"its incumbent {opt.best_id!r} is not one of its candidates")
    opt.metric_calls = int(header.get("metric_calls") or 0)
    opt.warnings = list(header.get("warnings") or [])
    if header["format"] == FORMAT:
        runs = header.get("proposer_runs") or ()
        opt.proposer_runs = [RunRecord.from_dict(r) for r in runs]
    else:
        opt.proposer_runs = _old_proposer(header.get("proposer") or {})
    opt.stop_reason = str(header.get("stop_reason") or "")
    opt.done = True
    return opt


def _old_proposer(figures: dict[str, Any]) -> list[RunRecord]:
    """The proposer's figures of an ``agentnb.optimisation/1`` file as the record of one run
    that made those calls (none when it made none)."""
    calls = int(figures.get("calls") or 0)
    if not calls:
        return []
    prompt, completion = (int(figures.get(k) or 0) for k in ("prompt_tokens", "completion_tokens"))
    return [
        RunRecord.from_dict(
            {
                "run_id": new_run_id(),
                "trace_id": new_trace_id(),
                "input": None,
                "stop_reason": "final_answer",
                "stage": "check_stop",
                "iterations": calls,
                "usage": {
                    "prompt_tokens": prompt,
                    "completion_tokens": completion,
                    "total_tokens": prompt + completion,
                },
                "model": str(figures.get("model") or ""),
                "tags": {"optimiser": "proposer"},
                "annotations": {"converted": _OLD},
            }
        )
    ]
