"""An optimisation in one JSONL file: its header line, then the evaluation of every run.

Line 1 holds the format, the settings, the split (task names), every candidate (texts,
lineage, status, scores, the gate's verdict), the history, the incumbent and the proposer's
figures; the lines after it are :meth:`Evaluation.save`'s, so the runs load with their
records and sessions. No model is needed to load it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from ... import _json
from ...errors import ConfigurationError
from ..saving import dump, load_lines, read_lines
from ..tasks import TaskSet
from .candidate import Candidate

if TYPE_CHECKING:
    from .optimisation import Optimisation

__all__ = ["FORMAT", "SETTINGS", "load", "save"]

FORMAT = "agentnb.optimisation/1"

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


def save(opt: Optimisation, path: Path, *, traces: bool = False) -> Path:
    header = {
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
        "proposer": {
            "model": opt.proposer.name if opt.proposer else opt.proposer_saved.get("model"),
            "calls": opt.proposer_calls,
            "prompt_tokens": opt.proposer_tokens[0],
            "completion_tokens": opt.proposer_tokens[1],
        },
    }
    body = [_json.dumps(header), *dump(opt.evaluation, traces=traces)]
    return _json.write_atomically(path, "\n".join(body) + "\n")


def load(cls: type[Opt], path: Path, *, trust: bool = False) -> Opt:
    """An optimisation of class ``cls`` (:class:`Optimisation`, given by its ``load``) as
    :func:`save` wrote it."""
    lines = read_lines(path)
    try:
        header = json.loads(lines[0][1])
        ok = isinstance(header, dict) and header.get("format") == FORMAT
    except (IndexError, ValueError):
        ok = False
    if not ok:
        raise ConfigurationError(f"{path} is not a saved optimisation")
    ev = load_lines(lines[1:], path, trust=trust)
    train = TaskSet([ev.tasks[n] for n in header["train"]], name=ev.tasks.name)
    validation = TaskSet([ev.tasks[n] for n in header["validation"]], name=ev.tasks.name)
    opt = cls(None, train, validation, **header["settings"])
    opt.evaluation = ev
    opt.candidates = [Candidate.from_dict(c) for c in header["candidates"]]
    opt.steps = header["steps"]
    opt.best_id = header["best"]
    opt.metric_calls = header["metric_calls"]
    opt.warnings = header.get("warnings", [])
    opt.proposer_saved = header.get("proposer") or {}
    opt.stop_reason = header.get("stop_reason", "")
    opt.done = True
    return opt
