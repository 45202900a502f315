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
and ``replayer`` (tool results, and how a replaying call is answered), ``faithful`` (whether a
replay reproduced its recording, on the run's record: ``an.evals.Replayed``), ``states`` (end
states in files, and one no check may read), ``sent`` (what each variant's runs sent: the
prompt diff), ``replay`` (a saved run as a regression test), ``saving``, ``ci`` (``python -m
agentnb eval``), ``optimise``
(``an.optimize``: proposals gated on held-out tasks), ``view`` and ``plot``; ``batches``
reads trajectories as reply batches. Conversations: ``user`` (``an.User``, the simulated user:
its rules, slips, a model playing it), ``conversation`` (the driver: agent and user turn by
turn on one session, the user's turn a stage, a person taking over), ``turns`` (a conversation
read back from its runs, and its stop reasons); ``checks.conversation`` checks one. Over
days of tuning: ``log`` (the experiment log: ``an.evals.experiments()``, ``experiment(id)``,
``compare`` across experiments), ``rescore`` (stored runs checked again, no agent model
called), ``labels`` and ``agreement`` (people's verdicts on runs, and how far a judge agrees
with them), ``noise`` (the A/A floor a gate must clear), ``variants`` (variants as a TOML
file).
"""

from . import checks, optimise
from .agreement import Agreement
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
from .faithful import Replayed
from .labels import Label
from .log import ExperimentLog, LogWarning, compare, experiment, experiments, joined
from .noise import NoiseFloor, noise
from .optimise import BudgetWarning, Candidate, Optimisation, optimize
from .planning import Plan, plan
from .record import OUTCOMES, EvalRecord
from .recording import ToolRecording
from .rows import read_row, records_of
from .runner import derive_seed
from .tasks import Task, TaskSet
from .turns import Turns
from .user import User, UserTurn
from .variants import Variants, load_variants

__all__ = [
    "OUTCOMES",
    "Agreement",
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
    "ExperimentLog",
    "Label",
    "LogWarning",
    "NoiseFloor",
    "Optimisation",
    "PairedCall",
    "Plan",
    "Price",
    "PriceTable",
    "Replayed",
    "ResponseCache",
    "Task",
    "TaskSet",
    "ToolRecording",
    "Turns",
    "User",
    "UserTurn",
    "Variants",
    "batches",
    "checks",
    "compare",
    "derive_seed",
    "evaluate",
    "experiment",
    "experiments",
    "joined",
    "load_variants",
    "noise",
    "optimise",
    "optimize",
    "plan",
    "prices",
    "read_row",
    "records_of",
    "start",
]
