"""The writer of TravelModel's answer: one line per section, in the answer's language."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..data import TravelData
from .failures import describe_failure
from .intent import TripRequest
from .phrases import say
from .summary import Style

__all__ = ["Outline", "Writer", "failure", "latest"]


@dataclass(frozen=True)
class Outline:
    """What the sections of an answer need to know of each other, settled before any of them
    is written (no section tells another anything while writing)."""

    #: (the asked day's failure, the other day's flights), offered because the asked day's
    #: failed (000 §5.2): the rest of the answer stays on the asked day, the budget leaves the
    #: flight out and gives the other day's fare apart.
    moved: tuple[Any, dict[str, Any]] | None = None
    #: The flights were looked up but came back as prose: the budget says the fare is left out.
    no_fare: bool = False


class Writer:
    """Lines in the answer's language, under a style and an outline (both read only)."""

    def __init__(
        self,
        req: TripRequest,
        data: TravelData,
        style: Style | None = None,
        outline: Outline | None = None,
    ) -> None:
        self.zh = req.language == "zh"
        self.req = req
        self.data = data
        self.lines: list[str] = []
        self.style = style or Style()
        self.outline = outline or Outline()

    @property
    def moved(self) -> dict[str, Any] | None:
        """The other day's flights result, when the answer offers it (see :class:`Outline`)."""
        return self.outline.moved[1] if self.outline.moved else None

    def city(self, name: str) -> str:
        """A city name in the answer's language."""
        if self.zh or self.data.resolve_city(name) is None:
            return name
        return self.data.city(self.data.resolve_city(name) or name).name_en

    @property
    def language(self) -> str:
        return "zh" if self.zh else "en"

    def put(self, key: str, **fields: Any) -> None:
        """Add the phrase ``key`` of :data:`.phrases.PHRASES`, filled in this language."""
        self.lines.append(say(key, self.language, **fields))

    def phrase(self, key: str, **fields: Any) -> str:
        return say(key, self.language, **fields)

    def t(self, zh: str, en: str) -> str:
        return zh if self.zh else en

    def add(self, zh: str, en: str) -> None:
        self.lines.append(self.t(zh, en))


def failure(w: Writer, what_zh: str, what_en: str, obs: list[Any]) -> None:
    last = obs[-1]
    if last.kind != "unknown_city":  # said once, at the top of the answer
        w.add(*describe_failure((what_zh, what_en), last))


def latest(
    w: Writer, req: TripRequest, obs: list[Any], want: str, what_zh: str, what_en: str
) -> dict[str, Any] | None:
    """The latest good result for a wanted section; reports a failure, or that the section was
    never looked up (never invented), and returns None."""
    if want not in req.wants:
        return None
    ok = [o for o in obs if o.ok and o.data]
    if ok:
        data: dict[str, Any] = ok[-1].data
        return data
    if obs:
        failure(w, what_zh, what_en, obs)
    else:  # on the wrap-up call the run hit max_iterations first: say so
        key = "not_looked_up_stopped" if w.style.stopped else "not_looked_up"
        w.put(key, what=what_zh if w.zh else what_en)
    return None
