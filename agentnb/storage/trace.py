"""A run's events as a table (pandas) or a JSONL file, and back."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

from .. import _html, _json
from ..display import Shown, static
from ..errors import TraceFormatError
from ..events import Event, ModelResponded, RequestAssembled
from ..tokens import HeuristicTokenizer
from . import codec as _tracefile

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Trace"]

_SCALARS = (str, int, float, bool, type(None))


class Trace(Shown):
    """An ordered list of events with table and file conversions."""

    def __init__(self, events: Iterable[Event] = ()) -> None:
        self.events: list[Event] = list(events)

    def __len__(self) -> int:
        return len(self.events)

    def __iter__(self) -> Iterator[Event]:
        return iter(self.events)

    @overload
    def __getitem__(self, index: int) -> Event: ...
    @overload
    def __getitem__(self, index: slice) -> Trace: ...
    def __getitem__(self, index: int | slice) -> Event | Trace:
        if isinstance(index, slice):
            return Trace(self.events[index])
        return self.events[index]

    def of_type(self, *types: type[Event]) -> list[Event]:
        """The events that are instances of any of ``types``."""
        return [e for e in self.events if isinstance(e, types)]

    def calibrated_tokenizer(self) -> HeuristicTokenizer:
        """The heuristic scaled to this trace's model: each request's estimated total against
        the prompt tokens the provider reported for it (estimated usage is left out; with no
        reported usage, the heuristic as it is)."""
        estimated = reported = 0
        budget = None
        for event in self.events:
            if isinstance(event, RequestAssembled):
                budget = event.budget.get("total")
            elif isinstance(event, ModelResponded) and budget and not event.usage.estimated:
                estimated += budget
                reported += event.usage.prompt_tokens
                budget = None
        return HeuristicTokenizer.calibrated(estimated, reported)

    def to_records(self) -> list[dict[str, Any]]:
        """One flat dict per event: common fields, ``type``, ``summary``, scalar fields."""
        start = self.events[0].time if self.events else 0.0
        rows = []
        for e in self.events:
            row: dict[str, Any] = {
                "seq": e.seq,
                "type": e.type,
                "stage": e.stage,
                "iteration": e.iteration,
                "t": round(e.time - start, 6),
                "wall": e.wall,
                "summary": e.summary(),
                "session_id": e.session_id,
                "run_id": e.run_id,
                "trace_id": e.trace_id,
            }
            for key, value in e.fields().items():
                if isinstance(value, _SCALARS):
                    row[key] = value
            rows.append(row)
        return rows

    def to_dataframe(self) -> pd.DataFrame:
        """One row per event (see :meth:`to_records`)."""
        import pandas as pd

        return pd.DataFrame.from_records(self.to_records())

    def to_jsonl(self) -> str:
        """The events as JSONL, each message stored once (see :mod:`agentnb.storage.codec`)."""
        return _tracefile.encode(self.events)

    def save(self, path: str | Path) -> Path:
        """Write the JSONL form to ``path`` atomically (a temporary file, then a rename)."""
        return _json.write_atomically(path, self.to_jsonl())

    @classmethod
    def from_jsonl(cls, text: str) -> Trace:
        """Read JSONL text (split on ``\\n`` only); a bad line raises ``TraceFormatError``."""
        return cls(_tracefile.decode(text.split("\n")))

    @classmethod
    def load(cls, path: str | Path) -> Trace:
        """Read a trace written by :meth:`save`."""
        data = Path(path).read_bytes()
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = data.count(b"\n", 0, exc.start) + 1
            raise TraceFormatError(
                f"trace line {line} of {path} is not UTF-8: {exc.reason}", line
            ) from None
        return cls.from_jsonl(text)

    def __repr__(self) -> str:
        return f"<Trace {len(self.events)} events>"

    def static_bundle(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        """One line per event, and the same as a table."""
        rows = [
            {"seq": r["seq"], "stage": r["stage"], "it": r["iteration"], "event": r["summary"]}
            for r in self.to_records()
        ]
        text = "\n".join(f"{r['seq']:>4} {r['stage']:<13} {r['event']}" for r in rows)
        html = lambda: _html.table(rows, title=repr(self))  # noqa: E731
        return static(text, html, include=include, exclude=exclude)
