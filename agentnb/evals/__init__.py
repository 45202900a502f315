"""Exploratory prompt tuning: task sets, evaluations, paired comparisons, tool replay.

    tasks = an.travel.task_set()                              # or an.TaskSet([...])
    ev = await an.evaluate({"article": agent, "vague": agent.copy(instructions=...)},
                           tasks, repeats=5, seed=0)
    ev.summary; ev.runs; ev.compare("article", "vague"); ev.session("vague", "weather-fri")
    ev = an.evals.start(...)      # the same sweep in the background: await ev / ev.cancel()
    offline = agent.replaying(an.ToolRecording.from_evaluation(ev))   # no side effects

Modules, one concept each: ``tasks`` (Task, TaskSet), ``checks`` (an.checks), ``runner``
(one run, tagged with its row, its checks annotated on its record: ``checked``), ``record``
(a row: a view of the run's record), ``rows`` (tagged runs made elsewhere into rows),
``handmade`` and ``upgrade`` (a row's record made from figures: by hand, or from a file of an
earlier format), ``apps`` (an app not built on agentnb as a variant, through the proxy),
``evaluate`` (the sweep), ``evaluation`` (its results), ``tables`` and ``statistics`` (the
numbers: the summary's from numpy, the comparison's from scipy.stats), ``comparison``
(paired, non-inferiority and TOST), ``verdict`` (its test, over tasks or pairs, and its plain
verdict), ``planning`` (``an.evals.plan``: the tasks a difference needs), ``cost``
(``an.evals.prices`` and what runs spent), ``outputs`` (every answer), ``cache`` (model
replies, in the one recorded-reply format of :mod:`agentnb.models.recorded`), ``recording``
and ``replayer`` (tool results, and how a replaying call is answered), ``replay`` (a saved run
as a regression test), ``saving``, ``ci`` (``python -m agentnb eval``), ``optimise``
(``an.optimize``: proposals gated on held-out tasks), ``view`` and ``plot``; ``batches``
reads trajectories as reply batches. Conversations: ``user`` (``an.User``, the simulated user:
its rules, slips, a model playing it), ``conversation`` (the driver: agent and user turn by
turn on one session, the user's turn a stage, a person taking over), ``turns`` (a conversation
read back from its runs, and its stop reasons); ``checks.conversation`` checks one.
"""

from . import checks, optimise
from .apps import App, AppContext
from .batches import PairedCall, batches
from .cache import CachedModel, ResponseCache
from .checked import Checked
from .comparison import Comparison
from .conversation import Conversation
from .cost import PRICES as prices
from .cost import Price, PriceTable
from .evaluate import evaluate, start
from .evaluation import Evaluation
from .optimise import BudgetWarning, Candidate, Optimisation, optimize
from .planning import Plan, plan
from .record import OUTCOMES, EvalRecord
from .recording import ToolRecording
from .rows import read_row, records_of
from .runner import derive_seed
from .tasks import Task, TaskSet
from .turns import Turns
from .user import User, UserTurn

__all__ = [
    "OUTCOMES",
    "App",
    "AppContext",
    "BudgetWarning",
    "CachedModel",
    "Candidate",
    "Checked",
    "Comparison",
    "Conversation",
    "EvalRecord",
    "Evaluation",
    "Optimisation",
    "PairedCall",
    "Plan",
    "Price",
    "PriceTable",
    "ResponseCache",
    "Task",
    "TaskSet",
    "ToolRecording",
    "Turns",
    "User",
    "UserTurn",
    "batches",
    "checks",
    "derive_seed",
    "evaluate",
    "optimise",
    "optimize",
    "plan",
    "prices",
    "read_row",
    "records_of",
    "start",
]
