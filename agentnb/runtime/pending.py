"""A coroutine that says what to do when it is used without ``await``.

``result = agent.run("…")`` without ``await`` used to hand back a bare coroutine, and
``result.output`` failed with ``AttributeError: 'coroutine' object has no attribute
'output'``. :class:`Pending` is the same coroutine (``await`` it, ``asyncio.run`` it, make a
task of it) whose other attributes and repr say to ``await`` it.
"""

from __future__ import annotations

from collections.abc import Coroutine, Generator
from typing import Any, Generic, TypeVar

__all__ = ["Pending"]

T = TypeVar("T")


class Pending(Coroutine[Any, Any, T], Generic[T]):
    __slots__ = ("_call", "_coro")

    def __init__(self, coro: Coroutine[Any, Any, T], call: str) -> None:
        self._coro = coro
        self._call = call

    def __await__(self) -> Generator[Any, None, T]:
        return self._coro.__await__()

    def send(self, value: Any) -> Any:
        return self._coro.send(value)

    def throw(self, *args: Any) -> Any:
        return self._coro.throw(*args)

    def close(self) -> None:
        self._coro.close()

    def _advice(self) -> str:
        return (
            f"{self._call} is a coroutine: write `result = await {self._call}` (in a script "
            "without an event loop: agent.run_sync(...))"
        )

    def __getattr__(self, name: str) -> Any:
        if name.startswith("cr_"):  # asyncio and debuggers read the coroutine's own state
            return getattr(self._coro, name)
        raise AttributeError(f"{self._advice()}; .{name} is on the result, not on the call")

    def __repr__(self) -> str:
        return f"<{self._call} not awaited: {self._advice()}>"
