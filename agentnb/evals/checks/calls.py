"""Checks over the trajectory: which tools were called, with what, in what order, together."""

from __future__ import annotations

from collections.abc import Sequence as Seq
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from ..batches import PairedCall
from ..normalise import matches
from .base import Check, Evidence
from .conversation import scoped

__all__ = ["Calls", "NoCall", "SameBatch", "Sequence", "calls", "no_call", "same_batch", "sequence"]


@dataclass(frozen=True, repr=False)
class Calls(Check):
    """Some call to ``tool`` whose arguments match ``args`` (see :func:`calls`)."""

    kind: ClassVar[str] = "calls"
    tool: str
    args: dict[str, Any] = field(default_factory=dict)

    def accepts(self, call: PairedCall) -> bool:
        return call.name == self.tool and matches(call.args, self.args)

    def judge(self, evidence: Evidence) -> tuple[bool, str]:
        same = [c for c in evidence.calls if c.name == self.tool]
        if any(self.accepts(c) for c in same):
            return True, ""
        if not same:
            made = ", ".join(str(c) for c in evidence.calls) or "none"
            return False, f"{self.tool} was never called (calls: {made})"
        return False, f"no {self.tool} call matched {self.args}: " + "; ".join(map(str, same))


def calls(tool: str, *, over: str = "turn", **args: Any) -> Check:
    """A call to ``tool`` whose arguments include ``args`` (in the last turn; ``over=
    "conversation"``: in any turn).

    Values compare after normalisation: strings ignore case, whitespace and punctuation;
    ``1 == 1.0``; a list is a set of accepted values (``city=["北京", "Beijing"]``).
    """
    return scoped(Calls(tool, args), over)


Matcher = str | Calls | list[str | Calls]


def _matcher(item: Any) -> str | Calls | list[str | Calls]:
    if isinstance(item, dict):
        return Calls(item["tool"], item.get("args") or {})
    if isinstance(item, list | tuple):
        return [_matcher(i) for i in item]  # type: ignore[misc]
    return item  # type: ignore[no-any-return]


def _accepts(matcher: str | Calls, call: PairedCall) -> bool:
    return call.name == matcher if isinstance(matcher, str) else matcher.accepts(call)


def _fits(items: list[str | Calls], batch: list[PairedCall], *, whole: bool) -> bool:
    """Each matcher takes a distinct call of ``batch``; ``whole``: and nothing is left."""
    free = list(batch)
    for m in items:
        hit = next((c for c in free if _accepts(m, c)), None)
        if hit is None:
            return False
        free.remove(hit)
    return not (whole and free)


def _plain(item: Any) -> Any:
    if isinstance(item, list):
        return [_plain(i) for i in item]
    return item if isinstance(item, str) else {"tool": item.tool, "args": item.args}


def _label(item: Any) -> str:
    if isinstance(item, list):
        return "[" + ", ".join(map(_label, item)) + "]"
    return item if isinstance(item, str) else item.name


@dataclass(frozen=True, repr=False)
class Sequence(Check):
    """Calls in an order over reply batches (see :func:`sequence`)."""

    kind: ClassVar[str] = "sequence"
    steps: tuple[Any, ...]
    order: str = "in_order"

    @classmethod
    def from_fields(cls, fields: dict[str, Any]) -> Check:
        steps = tuple(_matcher(s) for s in fields["steps"])
        return cls(steps, fields.get("order", "in_order"))

    def to_dict(self) -> dict[str, Any]:
        return {"check": self.kind, "steps": [_plain(s) for s in self.steps], "order": self.order}

    def judge(self, evidence: Evidence) -> tuple[bool, str]:
        trajectory = evidence.batches
        shown = " → ".join("[" + ", ".join(c.name for c in b) + "]" for b in trajectory) or "none"
        groups = [s if isinstance(s, list) else [s] for s in self.steps]
        if self.order == "exact":
            ok = len(groups) == len(trajectory) and all(
                _fits(g, b, whole=True) for g, b in zip(groups, trajectory, strict=True)
            )
            return ok, "" if ok else f"expected exactly {_label(list(self.steps))}; got {shown}"
        if self.order == "in_order":
            rest = iter(trajectory)
            for g, step in zip(groups, self.steps, strict=True):
                if not any(_fits(g, b, whole=False) for b in rest):
                    return False, f"{_label(step)} not found in order; got {shown}"
            return True, ""
        free = [c for b in trajectory for c in b]
        for g, step in zip(groups, self.steps, strict=True):
            if isinstance(step, list):  # a batch stays a batch even in any order
                if not any(_fits(g, b, whole=False) for b in trajectory):
                    return False, f"no reply made {_label(step)} together; got {shown}"
                continue
            hit = next((c for c in free if _accepts(g[0], c)), None)
            if hit is None:
                return False, f"{_label(step)} not called; got {shown}"
            free.remove(hit)
        return True, ""


def sequence(
    steps: Seq[Any],
    order: Literal["exact", "in_order", "any_order"] = "in_order",
    *,
    over: str = "turn",
) -> Check:
    """The run's calls follow ``steps``: each a tool name, a :func:`calls` matcher, or a list
    of them meaning *one reply* (calls made together, in any order within it).

    ``order="exact"``: the replies are exactly these, one step per reply; ``"in_order"``: the
    steps appear in this order, other replies may come between; ``"any_order"``: each step
    appears somewhere (distinct calls).
    """
    if order not in ("exact", "in_order", "any_order"):
        raise ValueError(f"order must be 'exact', 'in_order' or 'any_order', not {order!r}")
    return scoped(Sequence(tuple(_matcher(s) for s in steps), order), over)


@dataclass(frozen=True, repr=False)
class SameBatch(Check):
    """Two calls made in one reply, i.e. in parallel (see :func:`same_batch`)."""

    kind: ClassVar[str] = "same_batch"
    first: Any
    second: Any

    @classmethod
    def from_fields(cls, fields: dict[str, Any]) -> Check:
        return cls(_matcher(fields["first"]), _matcher(fields["second"]))

    def to_dict(self) -> dict[str, Any]:
        return {"check": self.kind, "first": _plain(self.first), "second": _plain(self.second)}

    def judge(self, evidence: Evidence) -> tuple[bool, str]:
        pair = [self.first, self.second]
        if any(_fits(pair, b, whole=False) for b in evidence.batches):
            return True, ""
        shown = " → ".join("[" + ", ".join(c.name for c in b) + "]" for b in evidence.batches)
        return False, f"{_label(pair)} were not called in one reply; got {shown or 'none'}"


def same_batch(first: str | Calls, second: str | Calls, *, over: str = "turn") -> Check:
    """``first`` and ``second`` called in the same reply (parallel tool calls)."""
    return scoped(SameBatch(first, second), over)


@dataclass(frozen=True, repr=False)
class NoCall(Check):
    """No tool call at all, or none to ``tool`` (see :func:`no_call`)."""

    kind: ClassVar[str] = "no_call"
    tool: str | None = None

    def judge(self, evidence: Evidence) -> tuple[bool, str]:
        bad = [c for c in evidence.calls if self.tool is None or c.name == self.tool]
        return not bad, "" if not bad else "called " + "; ".join(map(str, bad))


def no_call(tool: str | None = None, *, over: str = "turn") -> Check:
    """The run made no tool call (``tool=None``), or never called ``tool`` (``over=
    "conversation"``: in no turn)."""
    return scoped(NoCall(tool), over)
