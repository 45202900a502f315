"""Saving an evaluation to one JSONL file, and loading it back without any model.

The file is an export of the evaluation's runs, as a store keeps them: line 1 is the header
(format, settings, variants and what they were, the tasks with their checks, and the file's
**string table**); then one line per row: its session (id and messages in OpenAI shape), the
records of its runs (each turn of the task, the task's run last: tags, usage, latency, the
checks' annotation; :meth:`~agentnb.session.RunRecord.to_dict`), the trace of its task's
run (the events, each message once, the ids every event of the run carries written once in
``run``; ``save(path, traces=False)`` leaves them out) and the end state its checks read
(``state``, as :mod:`agentnb.evals.states` keeps one: a state JSON cannot keep exactly is
written with the reason, and reads back refused). Loading puts the records back in
their session's ``runs``: every figure of every table is read from them again, nothing was
copied into the file that the runs do not hold. Content shared
between runs is stored once: every string of 24 characters or more that occurs twice or
more (a system prompt, a tool schema's description, a tool result the repeats all got, the
ids every event of a run carries) is written once in the table and referred to as
``{"$s": n}``, and so is every JSON object or array of 64 characters or more that occurs twice
or more (a tool schema, a message every repeat sent), as ``{"$o": n}`` (a dict of ours with
one such key is escaped as ``{"$lit": ...}``).

Every line follows the one character rule of :mod:`agentnb._json` (U+2028, U+0085 and lone
surrogates escaped) and lines are split on ``\\n`` only, so whatever an answer holds, the
file reads back. Checks are kept whole: an importable function by its path, one defined in a
notebook by its source (see :mod:`agentnb.evals.checks.base`); a check that cannot be kept
makes the save refuse, naming it. A loaded evaluation has every record, check, session and
trace: it shows its matrix, compares, builds tool recordings and replays runs as regression
tests; only ``rerun`` needs the agents again. Files of earlier formats
(``agentnb.evaluation/1`` and ``/2``, one copied record per row) load too: each row is read
into its run's record (:mod:`agentnb.evals.upgrade`), and saving writes this format.
"""

from __future__ import annotations

import copy
import json
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ..errors import ConfigurationError
from ..session import Session
from ..storage import Trace, dumps, write_atomically
from .rows import read_row
from .states import dump_state, is_state, load_state
from .tasks import TaskSet
from .upgrade import OLD_EVALUATIONS, old_row

if TYPE_CHECKING:
    from .evaluation import Evaluation

#: The class a loaded evaluation is made of (its caller's: Evaluation.load passes it).
E = TypeVar("E", bound="Evaluation")

__all__ = ["FORMAT", "load", "save"]

FORMAT = "agentnb.evaluation/3"
#: Strings at least this long are stored once when they occur more than once.
SHARED = 24
SHARED_OBJECTS = 64


class _Packer:
    """Stores shared content once: strings of ``SHARED`` characters or more, and JSON
    objects and arrays whose text is ``SHARED_OBJECTS`` characters or more (a tool schema, a
    message every repeat sent), when they occur twice or more. Objects are numbered in the
    order their text first completes (children before parents), so a table entry only ever
    refers to entries before it."""

    def __init__(self) -> None:
        self.strings: Counter[str] = Counter()
        self.objects: Counter[str] = Counter()
        self.order: dict[str, None] = {}

    def count(self, value: Any) -> str:
        """The JSON text of ``value``, counting its strings and subtrees on the way."""
        if isinstance(value, str):
            if len(value) >= SHARED:
                self.strings[value] += 1
            return json.dumps(value, ensure_ascii=False)
        if isinstance(value, dict):
            text = "{" + ",".join(f"{json.dumps(k)}:{self.count(v)}" for k, v in value.items())
            text += "}"
        elif isinstance(value, list):
            text = "[" + ",".join(self.count(v) for v in value) + "]"
        else:
            return json.dumps(value)
        if len(text) >= SHARED_OBJECTS:
            self.objects[text] += 1
            self.order.setdefault(text, None)
        return text

    def tables(self) -> tuple[dict[str, int], dict[str, int]]:
        strings = {s: i for i, s in enumerate(s for s, n in self.strings.items() if n > 1)}
        shared = [t for t in self.order if self.objects[t] > 1]
        return strings, {t: i for i, t in enumerate(shared)}


def _pack(value: Any, strings: dict[str, int], objects: dict[str, int], top: bool = False) -> Any:
    if isinstance(value, str):
        n = strings.get(value)
        return value if n is None else {"$s": n}
    if isinstance(value, dict | list) and not top and objects:
        n = objects.get(_text(value))
        if n is not None:
            return {"$o": n}
    if isinstance(value, dict):
        packed = {k: _pack(v, strings, objects) for k, v in value.items()}
        escape = len(value) == 1 and next(iter(value)) in ("$s", "$o", "$lit")
        return {"$lit": packed} if escape else packed
    if isinstance(value, list):
        return [_pack(v, strings, objects) for v in value]
    return value


def _text(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ",".join(f"{json.dumps(k)}:{_text(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_text(v) for v in value) + "]"
    return json.dumps(value, ensure_ascii=False)


def _unpack(value: Any, strings: list[str], objects: list[Any]) -> Any:
    if isinstance(value, dict):
        if len(value) == 1:
            if "$s" in value:
                return strings[value["$s"]]
            if "$o" in value:
                return copy.deepcopy(objects[value["$o"]])
            if "$lit" in value:
                return {k: _unpack(v, strings, objects) for k, v in value["$lit"].items()}
        return {k: _unpack(v, strings, objects) for k, v in value.items()}
    if isinstance(value, list):
        return [_unpack(v, strings, objects) for v in value]
    return value


#: Fields every event of a run carries with the same value: written once per run.
_PER_RUN = ("session_id", "run_id", "trace_id")


def _factor(events: list[dict[str, Any]]) -> dict[str, Any]:
    """Take the fields every event of the trace shares out of its events (in place)."""
    numbered = [e for e in events if "seq" in e]
    common = {
        k: numbered[0][k]
        for k in _PER_RUN
        if numbered and all(k in e and e[k] == numbered[0][k] for e in numbered)
    }
    for e in numbered:
        for k in common:
            del e[k]
    return common


def save(ev: Evaluation, path: Path, *, traces: bool = True) -> Path:
    return write_atomically(path, "\n".join(dump(ev, traces=traces)) + "\n")


def dump(ev: Evaluation, *, traces: bool = True) -> list[str]:
    """The lines of a saved evaluation (:func:`save` writes them; the optimiser's file
    carries them after its own header)."""
    header: dict[str, Any] = {
        "format": FORMAT,
        "variants": ev.variants,
        "descriptions": ev.descriptions,
        "repeats": ev.repeats,
        "seed": ev.seed,
        "errors": ev.errors,
        "tasks_name": ev.tasks.name,
        "tasks": ev.tasks.to_dicts(),  # refuses, naming them, checks it cannot keep
    }
    entries = []
    for r in ev.records:
        session, trace, state = ev.kept(r)
        lines = trace.to_jsonl().split("\n") if traces and trace is not None else None
        events = [json.loads(x) for x in lines if x.strip()] if lines else None
        entries.append(
            {
                "session": session.id if session is not None else None,
                "messages": session.to_openai() if session is not None else None,
                "runs": [run.to_dict() for run in r.runs],
                "trace": events,
                "run": _factor(events) if events else None,
                "state": dump_state(state) if is_state(state) else None,
            }
        )
    packer = _Packer()
    for entry in entries:
        packer.count(entry)
    strings, objects = packer.tables()
    header["strings"] = list(strings)
    table = [json.loads(t) for t in objects]
    header["objects"] = [_pack(o, strings, objects, top=True) for o in table]
    body = [dumps(header)] + [dumps(_pack(e, strings, objects)) for e in entries]
    return body


def read_lines(path: Path) -> list[tuple[int, str]]:
    """The non-empty lines of a saved file, numbered from 1 (split on ``\\n`` only)."""
    text = path.read_text(encoding="utf-8")
    return [(n, line) for n, line in enumerate(text.split("\n"), 1) if line.strip()]


def load(cls: type[E], path: Path, *, judge: Any = None, trust: bool = False) -> E:
    """The evaluation, of class ``cls`` (given by :meth:`Evaluation.load`), saved in ``path``."""
    return load_lines(cls, read_lines(path), path, judge=judge, trust=trust)


def load_lines(
    cls: type[E],
    lines: list[tuple[int, str]],
    path: Path,
    *,
    judge: Any = None,
    trust: bool = False,
) -> E:
    """The evaluation of class ``cls`` these numbered lines hold (``path`` names them in
    errors)."""
    try:
        header = json.loads(lines[0][1])
    except (IndexError, ValueError) as exc:
        raise ConfigurationError(f"{path} is not a saved evaluation ({exc})") from None
    known = (FORMAT, *OLD_EVALUATIONS)
    if not isinstance(header, dict) or header.get("format") not in known:
        shown = header.get("format") if isinstance(header, dict) else header
        raise ConfigurationError(
            f"{path} is not a saved evaluation ({shown!r}); this agentnb reads {', '.join(known)}"
        )
    source = header["format"]
    strings = header.get("strings") or []
    objects: list[Any] = []
    for raw in header.get("objects") or []:
        objects.append(_unpack(raw, strings, objects))
    records = [{k: v for k, v in t.items() if k != "unsaved_checks"} for t in header["tasks"]]
    tasks = TaskSet.from_dicts(
        records, name=header.get("tasks_name", "tasks"), judge=judge, trust=trust, where=path
    )
    ev = cls(
        header["variants"], tasks, header["repeats"], seed=header["seed"], errors=header["errors"]
    )
    ev.descriptions = header.get("descriptions") or {}
    for number, line in lines[1:]:
        try:
            entry = _unpack(json.loads(line), strings, objects)
            messages, trace, common = entry.get("messages"), entry.get("trace"), entry.get("run")
            session = _session(messages, entry.get("session"))
            if source == FORMAT:
                row = read_row(entry["runs"], session)
            else:  # an earlier format: its copied record read into its run's record
                row = old_row(entry["record"], session, common, source=source)
        except (ValueError, KeyError, TypeError, IndexError, ConfigurationError) as exc:
            raise ConfigurationError(f"{path}:{number}: not a saved run ({exc})") from None
        if isinstance(trace, list):
            trace = "\n".join(dumps({**x, **(common or {})} if "seq" in x else x) for x in trace)
        state = entry.get("state")
        state = load_state(state) if isinstance(state, dict) else None
        ev.add(row, session, Trace.from_jsonl(trace) if trace else None, state)
    ev.finish()
    return ev


def _session(messages: Any, sid: Any) -> Session | None:
    if messages is None:
        return None
    try:
        return Session(messages, id=sid) if isinstance(sid, str) else Session(messages)
    except ConfigurationError:  # an id this agentnb does not take: the messages are what count
        return Session(messages)
