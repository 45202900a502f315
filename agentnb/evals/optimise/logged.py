"""The optimiser and the experiment log and noise floor: an optimisation recorded when it
stops (its header and every run, :mod:`agentnb.evals.log`), and the gate's ``noise=``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...errors import ConfigurationError
from ..log.identity import code_version
from ..log.recording import chosen, record
from ..noise import NoiseFloor
from ..tasks import TaskSet
from .files import header

if TYPE_CHECKING:
    from .optimisation import Optimisation

__all__ = ["SEED", "floor_option", "follow_optimisation", "seed_floor"]

#: ``noise=True``: the floor is read from the agent as given's own validation repeats.
SEED = "seed"


def floor_option(noise: Any, repeats: int, validation: TaskSet) -> NoiseFloor | str | None:
    """``optimize(noise=...)`` checked: None, a floor covering the validation tasks, or
    :data:`SEED` (``True``: read from the seed's repeats, which needs ``repeats`` ≥ 2)."""
    if noise is None or noise is False:
        return None
    if noise is True:
        if repeats < 2:
            raise ConfigurationError(
                "noise=True reads the noise floor from the agent as given's repeats of the "
                "validation tasks: give repeats=2 or more, or a floor from an.evals.noise(...)"
            )
        return SEED
    if not isinstance(noise, NoiseFloor):
        raise ConfigurationError(
            f"noise is a floor from an.evals.noise(...) or True, not {noise!r:.60}"
        )
    missing = [t for t in validation.names if t not in noise.counts]
    if missing:
        raise ConfigurationError(
            f"the noise floor was measured on other tasks: validation tasks {missing[:8]} are "
            "not in it; measure it on these tasks, or use noise=True"
        )
    return noise


def seed_floor(opt: Optimisation) -> None:
    """``noise=True``: the floor of the seed's runs on the validation tasks (after the start)."""
    if opt.noise == SEED:
        opt.noise = NoiseFloor.of(opt.evaluation, "c0", tasks=opt.validation.names)


def follow_optimisation(opt: Optimisation, log: Any, note: str = "") -> None:
    """Record ``opt`` in the log ``log=`` names when it stops (opened now)."""
    place = chosen(log)
    if place is None:
        return
    version = code_version()

    def ended(kind: str, _data: Any) -> None:
        if kind == "end":
            extra = {"optimisation": header(opt)}
            record(opt.evaluation, place, kind="optimisation", note=note, version=version,
                   extra=extra)  # fmt: skip

    opt.subscribe(ended)
