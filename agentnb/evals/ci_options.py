"""What ``python -m agentnb eval`` adds for tuning over days (issue 41), beside its gate:

* ``--variants variants.toml``: variants as data (:mod:`.variants`), its ``baseline`` the
  gate's unless ``--baseline`` says otherwise;
* ``--noise [REPEATS]``: before the sweep, the baseline runs against itself (``REPEATS``
  runs of each task, 5 by default: :func:`agentnb.evals.noise`); its floor is printed, and a
  comparison whose difference is within it is ``UNDERPOWERED``: no verdict, a skipped gate
  case in the JUnit file, not a regression;
* ``--log PLACE`` (a path, or ``off``) and ``--note TEXT``: where the evaluation is recorded
  (:mod:`agentnb.evals.log`; by default ``agentnb-experiments.sqlite`` here).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from .noise import NoiseFloor, noise
from .tasks import TaskSet
from .variants import load_variants

__all__ = ["cli_floor", "cli_log", "cli_options", "log_option", "variants_of"]


def cli_options(parser: argparse.ArgumentParser) -> None:
    """The ``eval`` options of the module docstring."""
    parser.add_argument(
        "--noise",
        type=int,
        nargs="?",
        const=5,
        metavar="REPEATS",
        help="first run the baseline against itself (REPEATS runs per task, 5 by default): a "
        "difference within its noise floor is UNDERPOWERED, no verdict",
    )
    log_option(parser)


def log_option(parser: argparse.ArgumentParser) -> None:
    """``--log PLACE`` and ``--note TEXT`` (also ``rescore``'s)."""
    parser.add_argument(
        "--log",
        metavar="PLACE",
        help="the experiment log: a SQLite file, or off (default: $AGENTNB_LOG, else "
        "agentnb-experiments.sqlite here)",
    )
    parser.add_argument("--note", default="", help="a few words kept with the experiment")


def cli_log(args: argparse.Namespace) -> dict[str, Any]:
    """``log=`` and ``note=`` as ``--log`` and ``--note`` say."""
    place = getattr(args, "log", None)
    log: Any = False if isinstance(place, str) and place.lower() == "off" else place
    return {"log": log, "note": getattr(args, "note", "")}


def variants_of(spec: str, load_spec: Callable[[str, str], Any]) -> Any:
    """The variants ``--variants`` names: a ``.toml`` file, else ``module:attribute``."""
    if spec.endswith(".toml"):
        return load_variants(spec)
    return load_spec(spec, "variants")


async def cli_floor(variants: Any, tasks: TaskSet, args: argparse.Namespace) -> NoiseFloor | None:
    """``--noise``: the baseline's floor, measured and printed before the sweep (None
    without the option)."""
    repeats = getattr(args, "noise", None)
    if not repeats:
        return None
    agents = (
        variants
        if isinstance(variants, dict)
        else {getattr(variants, "name", "") or "agent": variants}
    )
    name = args.baseline or getattr(variants, "baseline", None) or next(iter(agents))
    if name not in agents:
        return None  # the run reports the unknown baseline
    floor = await noise(
        {name: agents[name]}, tasks, repeats, seed=args.seed, concurrency=args.concurrency,
        timeout=args.timeout, progress=False, **cli_log(args),
    )  # fmt: skip
    print(f"noise floor: {floor.verdict}")
    sys.stdout.flush()
    return floor
