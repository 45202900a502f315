"""The experiment log: every evaluation and optimisation, recorded by default, to list,
reopen and compare over days of tuning.

    an.evals.experiments()                     # a DataFrame: id, when, kind, variants, ...
    ev = an.evals.experiment("e-1a2b")         # one, whole (its runs, checks, labels)
    an.evals.compare("e-1a2b", "e-9f3c", baseline="article", other="terse")
    an.evals.ExperimentLog("team.sqlite")      # a place of your own (or a PostgresStore)
    ev = await an.evaluate(variants, tasks, log=False, note="...")   # none / a note

Modules: ``store`` (the tables, :class:`ExperimentLog`), ``identity`` (what identifies an
experiment: digests, the code's version, the figures), ``recording`` (``log=``, written when
an experiment ends; labels and flags written back), ``reading`` (``experiments()``,
``experiment(id)``), ``across`` (``compare`` and ``joined`` across two experiments). It is a
view over runs (DESIGN invariant 7): an entry holds what identifies the experiment and links
its runs, stored as sessions with their records.
"""

from .across import compare, joined
from .reading import experiment, experiments
from .recording import DEFAULT, ENV, LogEntry, LogWarning, chosen, follow, record
from .store import ExperimentLog

__all__ = [
    "DEFAULT",
    "ENV",
    "ExperimentLog",
    "LogEntry",
    "LogWarning",
    "chosen",
    "compare",
    "experiment",
    "experiments",
    "follow",
    "joined",
    "record",
]
