"""Provenance: where every value of a conversation came from, and instructions found in data.

    prov = session.provenance()                 # or session.provenance(run=result.run_id)
    prov.of("search_hotels", "city")[0].sources  # (Source(kind='user', message=0, ...),)
    prov.invented; prov.steered; prov.flags      # found in nothing; only in an injection; ...
    an.provenance.scan("Ignore previous instructions and ...")   # the detector alone
    an.provenance.rules_table()                  # its rules, each with an example

Modules, one concept each: ``normal`` and ``dates`` (the one normaliser: text, numbers,
dates), ``figures`` (the text rule: which parts of a text are figures; grounding), ``rules``
and ``detector`` (instructions found in data), ``sources`` (a value, its sources, a flag),
``pieces`` (what the model was given, read into pieces, and a tracer's pool of them),
``match`` (a value against those pieces), ``trace`` (message by
message), ``result`` (the answer). It reads OpenAI wire dicts only, so it sits right above
``messages``: the session, the checks
(``an.checks.grounded()``, ``not_steered()``, ``provenance()``) and the views all read it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date
from typing import Any

from .dates import Day, dates_in, day_of
from .detector import Flag, scan
from .figures import ENTITY, EXAMPLE, FIGURE, examples, figures, ungrounded
from .normal import Folded, fold, number_of, numbers_in
from .result import Provenance
from .rules import RULES, Rule, rules_table
from .sources import KINDS, Flagged, Source, Value
from .trace import Tracer, trace

__all__ = [
    "ENTITY",
    "EXAMPLE",
    "FIGURE",
    "KINDS",
    "RULES",
    "Day",
    "Flag",
    "Flagged",
    "Folded",
    "Provenance",
    "Rule",
    "Source",
    "Tracer",
    "Value",
    "dates_in",
    "day_of",
    "examples",
    "figures",
    "fold",
    "heads",
    "marks",
    "number_of",
    "numbers_in",
    "of",
    "rules_table",
    "scan",
    "trace",
    "ungrounded",
]


def heads(requests: Sequence[Any]) -> Any:
    """``head(i)`` for a :class:`Tracer`: the instructions, memory and tool schemas of the
    request that produced assistant message ``i``, from a session's ``requests`` (records with
    ``.request``: its ``head``, ``spans`` and ``tools``); the latest one sent before ``i``."""
    sent = []
    for record in requests:
        request = getattr(record, "request", record)
        upto = max((b for _, b in getattr(request, "spans", ())), default=0)
        sent.append((upto, tuple(getattr(request, "head", ())), getattr(request, "tools", [])))

    def head(i: int) -> tuple[Sequence[Mapping[str, Any]], Sequence[Mapping[str, Any]]]:
        best = None
        for upto, messages, tools in sent:
            if upto <= i:
                best = (messages, tools)
        return best if best is not None else ((), ())

    return head


def of(
    wires: Sequence[Mapping[str, Any]],
    *,
    requests: Sequence[Any] = (),
    runs: Sequence[Any] = (),
    run: Any = None,
    today: date | None = None,
) -> Provenance:
    """The provenance of a conversation (``session.provenance()`` calls this): its messages as
    wire dicts, the session's ``requests`` (for the instructions each reply saw) and ``runs``
    (to tag each value with its run; ``run``, a run id or record, keeps that run's values)."""
    tracer = trace(wires, head=heads(requests), today=today, runs=runs)
    values, flags = tracer.values, tracer.flags
    if run is not None:
        run_id = getattr(run, "run_id", run)
        values = [v for v in values if v.run_id == run_id]
        record = next((r for r in runs if r.run_id == run_id), None)
        if record is not None and record.start is not None:
            end = record.end if record.end >= 0 else len(wires)
            flags = [f for f in flags if record.start <= f.message < end]
    return Provenance(values, flags)


def marks(
    wires: Sequence[Mapping[str, Any]],
    *,
    requests: Sequence[Any] = (),
    today: date | None = None,
    shown_from: int = 0,
) -> dict[int, dict[str, Any]]:
    """What a transcript of ``wires`` marks (:meth:`Provenance.marks`: the instructions found
    in its data, the calls they steered, each argument's sources), by message index. Traces
    calls and results only: the messages from ``shown_from`` on (those a transcript shows) in
    full, the earlier ones only for what later values may come from and the values that can be
    steered (``Tracer(steered_only=True)``), so a long session costs a scan of its hidden
    part's results, not a search for every value in it."""
    tracer = Tracer(heads(requests), today, claims=False, steered_only=True)
    for i, wire in enumerate(wires):
        tracer.steered_only = i < shown_from
        tracer.add(i, wire)
    return Provenance(tracer.values, tracer.flags).marks(wires)
