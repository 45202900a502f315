"""The records a session keeps of what happened on it: one per run, one per model request.

Each fact has one home (DESIGN invariant 7): a run's outcome is its :class:`RunRecord`, a
request and its token budget are its :class:`RequestRecord`. Events announce copies; views,
inspectors and results read these.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConfigurationError
from ..models.base import ModelRequest, Usage

__all__ = ["RequestRecord", "RunRecord", "checked_tags", "usage_dict"]


@dataclass(slots=True)
class RunRecord:
    """The one home of a run's outcome (``session.runs``): where its messages are, what it
    answered, why and where it stopped, what it used, and what it was run as. ``RunResult``
    reads it; ``RunStopped`` announces a copy; an evaluation's rows, a service task's info and
    the proxy's conversations are views over it.

    ``start`` is None until the run holds its session (a run cancelled before ``restore``
    never touched it); ``end`` is -1 until it persists.

    Usage is kept live, model call by model call: ``usage`` sums every call's tokens (a
    model that reports none is estimated, ``usage.estimated``), ``unmetered`` counts those
    calls, ``cached_calls`` the calls answered from a cache (free: ``billed`` leaves them
    out), ``model`` names the model that answered last. ``latency`` is the run's duration in
    seconds on the events' clock (set when it stops).

    ``tags`` say what the run was run as, in words a table can group by: an evaluation's
    ``variant``, ``task``, ``repeat`` and ``seed``; the service's ``task`` and ``attempt``;
    the proxy's ``conversation``. ``annotations`` are what was found out about the run after
    it ended (an evaluation's check results), as ``ToolFinished`` annotates a call.
    """

    run_id: str
    trace_id: str
    input: str | None
    start: int | None = None
    end: int = -1
    output: str | None = None
    stop_reason: str | None = None
    detail: str = ""
    #: The stage the run was in when it stopped.
    stage: str | None = None
    iterations: int = 0
    usage: Usage = field(default_factory=Usage)
    started: float = field(default_factory=time.time)
    #: The service's task this run is an attempt of (``agentnb.Runtime``), if any.
    task_id: str | None = None
    tags: dict[str, str] = field(default_factory=dict)
    model: str = ""
    cached_calls: int = 0
    #: The tokens of the calls answered from a cache (part of ``usage``, never billed).
    cached: Usage | None = None
    unmetered: int = 0
    latency: float = 0.0
    #: None until something is found out about the run (built on demand: most runs have none).
    annotations: dict[str, Any] | None = None
    #: The final answer validated into the agent's ``output_type`` (``result.value``); None
    #: without one, or when the answer was not valid. Written to plain data as JSON.
    value: Any = None

    @property
    def billed(self) -> Usage:
        """The tokens the run really sent and received: ``usage`` less its cached calls."""
        usage, cached = self.usage, self.cached
        if cached is None:
            return usage
        return usage - cached

    def to_dict(self) -> dict[str, Any]:
        """The record as plain JSON data: a store's format (an evaluation's file, a service's
        table). An annotation with a ``to_dict()`` is written as its dict, others as they are."""
        data = {name: getattr(self, name) for name in _FIELDS}
        data["usage"] = usage_dict(self.usage)
        data["cached"] = None if self.cached is None else usage_dict(self.cached)
        data["tags"] = dict(self.tags)
        value = self.value
        if value is not None:
            data["value"] = value.model_dump(mode="json") if hasattr(value, "model_dump") else value
        if self.annotations is not None:
            data["annotations"] = {
                k: v.to_dict() if hasattr(v, "to_dict") else v for k, v in self.annotations.items()
            }
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RunRecord:
        """A record read back from :meth:`to_dict`'s data (annotations as plain data);
        ``ConfigurationError`` names what is missing or of the wrong kind."""
        try:
            fields = {name: data[name] for name in _FIELDS if name in data}
            fields["usage"] = Usage(**data.get("usage") or {})
            cached = data.get("cached")
            fields["cached"] = None if cached is None else Usage(**cached)
            fields["tags"] = checked_tags(data.get("tags"))
            annotations = data.get("annotations")
            fields["annotations"] = None if annotations is None else dict(annotations)
            fields["value"] = data.get("value")  # as plain data: the type is the agent's
            record = cls(**fields)
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfigurationError(f"not a run record ({type(exc).__name__}: {exc})") from None
        if not isinstance(record.run_id, str) or not isinstance(record.trace_id, str):
            raise ConfigurationError(f"not a run record (its ids: {record.run_id!r:.40})")
        return record


#: The fields :meth:`RunRecord.to_dict` writes as they are.
_FIELDS = (
    "run_id",
    "trace_id",
    "input",
    "start",
    "end",
    "output",
    "stop_reason",
    "detail",
    "stage",
    "iterations",
    "started",
    "task_id",
    "model",
    "cached_calls",
    "unmetered",
    "latency",
)


def usage_dict(usage: Usage) -> dict[str, Any]:
    """``usage`` as plain data (``estimated`` written only when true)."""
    data: dict[str, Any] = {
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "total_tokens": usage.total_tokens,
    }
    if usage.estimated:
        data["estimated"] = True
    data.update(usage.details())
    return data


@dataclass(slots=True)
class RequestRecord:
    """One model request of a session (``session.requests``), as ``assemble`` built it.

    ``budget`` is the token breakdown (instructions, tools, history, total; with a window:
    context_window, reply_reserve, available; memory when recalled), ``policy`` the context
    policy's name and ``note`` what it dropped or summarised. ``RequestAssembled`` announces
    the same; the request inspector reads it here. Read only by convention, like events: one
    is built per model call, and a frozen dataclass costs four times as much to build.
    """

    run_id: str | None
    iteration: int
    request: ModelRequest
    budget: dict[str, Any]
    policy: str
    note: str = ""


def checked_tags(tags: Mapping[str, str] | None) -> dict[str, str]:
    """A run's tags as a fresh dict of non-empty names to text, refused before the run."""
    if tags is None:
        return {}
    if not isinstance(tags, Mapping):
        raise ConfigurationError(f"tags must be a dict of str to str, got {tags!r:.80}")
    for name, value in tags.items():
        if not isinstance(name, str) or not name or not isinstance(value, str):
            raise ConfigurationError(
                f"tags must map non-empty names to text (str); got {name!r}: {value!r:.80}"
            )
    return dict(tags)
