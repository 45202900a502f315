"""A :class:`Toolset`: an agent's tools by name, in the order given, with the ``tools`` array
of a request built once per change."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from ..errors import ToolDefinitionError
from .tool import Tool

__all__ = ["Toolset"]


class Toolset:
    """Tools by name, in the order given. Refuses two tools with one name."""

    def __init__(
        self, tools: Iterable[Tool | Callable[..., Any]] = (), *, side_effects: bool = False
    ) -> None:
        #: Whether a tool that does not say (``side_effects=None``) has side effects.
        self.side_effects = side_effects
        self._tools: dict[str, Tool] = {}
        self._schemas: list[dict[str, Any]] | None = None
        #: Bumped whenever the set changes (token counts and request records key on it).
        self.version = 0
        for t in tools:
            self.add(t)

    def add(self, item: Tool | Callable[..., Any]) -> Tool:
        """Add a tool (a plain function is wrapped with :func:`tool`)."""
        t = item if isinstance(item, Tool) else Tool(item)
        if t.name in self._tools:
            raise ToolDefinitionError(
                f"two tools are named {t.name!r}; tool names must be unique "
                f"(rename one with @an.tool(name=...))"
            )
        self._tools[t.name] = t
        self._schemas = None
        self.version += 1
        return t

    def remove(self, name: str) -> Tool:
        """Remove a tool by name and return it."""
        t = self._tools.pop(name)
        self._schemas = None
        self.version += 1
        return t

    def has_side_effects(self, name: str) -> bool:
        """Whether a call of ``name`` may change the world (unknown tools: False)."""
        t = self._tools.get(name)
        if t is None:
            return False
        return self.side_effects if t.side_effects is None else t.side_effects

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    @property
    def names(self) -> list[str]:
        return list(self._tools)

    def schemas(self) -> list[dict[str, Any]]:
        """The ``tools`` array of a Chat Completions request (cached until the set changes)."""
        if self._schemas is None:
            self._schemas = [t.schema for t in self._tools.values()]
        return self._schemas

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __getitem__(self, name: str) -> Tool:
        return self._tools[name]

    def __repr__(self) -> str:
        return f"Toolset({', '.join(self._tools)})"
