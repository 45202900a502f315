"""An optimisation in one JSONL file: its header line, then the evaluation of every run.

Line 1 holds the format, the settings, the split (task names), every candidate (texts,
lineage, status, scores, the gate's verdict), the history, the incumbent and the proposer's
figures; the lines after it are :meth:`Evaluation.save`'s, so the runs load with their
records and sessions. No model is needed to load it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ... import _json
from ...errors import ConfigurationError
from ..saving import dump, load_lines, read_lines
from ..tasks import TaskSet
from .candidate import Candidate

if TYPE_CHECKING:
    from ..evaluation import Evaluation
    from .optimisation import Optimisation

__all__ = ["FORMAT", "load", "save"]

FORMAT = "agentnb.optimisation/1"


def save(opt: Optimisation, path: Path, *, traces: bool = False) -> Path:
    from .optimisation import SETTINGS

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


def load(path: Path, *, trust: bool = False) -> Optimisation:
    """The optimisation saved at ``path``; a file that is not one, or whose header is damaged
    (an unknown setting, a candidate without texts, a task its runs lack), is refused with a
    ConfigurationError naming what is wrong (as a saved evaluation's lines are)."""
    lines = read_lines(path)
    try:
        header = json.loads(lines[0][1])
        ok = isinstance(header, dict) and header.get("format") == FORMAT
    except (IndexError, ValueError):
        ok = False
    if not ok:
        raise ConfigurationError(f"{path} is not a saved optimisation")
    ev = load_lines(lines[1:], path, trust=trust)
    try:
        return _read(header, ev, path)
    except ConfigurationError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError) as exc:  # said as a damaged file
        raise ConfigurationError(
            f"{path}:1: the optimisation's header is damaged ({exc!r})"
        ) from None


def _read(header: dict[str, Any], ev: Evaluation, path: Path) -> Optimisation:
    """The optimisation a header describes, each part checked: what is wrong is named."""
    from .optimisation import SETTINGS, Optimisation

    def damaged(what: str) -> ConfigurationError:
        return ConfigurationError(f"{path}:1: the optimisation's header is damaged: {what}")

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
    opt = Optimisation(None, split["train"], split["validation"], **settings)
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
    opt.proposer_saved = header.get("proposer") or {}
    opt.stop_reason = str(header.get("stop_reason") or "")
    opt.done = True
    return opt
