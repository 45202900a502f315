"""Variants as data: a TOML file names a base agent and the variants to evaluate, so a
teammate who does not write Python can add a prompt.

    # variants.toml
    base = "myproject.agents:agent"      # module:attribute: an Agent, or a function making one
    baseline = "article"                 # the variant the gate compares with (default: the first)

    [variants.article]                   # the base as it is

    [variants.terse]
    instructions = "你是差旅助手。回答要简短。"
    model_params = { temperature = 0.2 }  # request parameters (model settings)
    max_iterations = 4

    [variants.terse.descriptions]        # tool descriptions, by tool name
    search_weather = "Weather for a city on a date (YYYY-MM-DD)."

    [variants.from_files]
    instructions_file = "prompts/v3.md"  # text from a file, relative to this one
    description_files = { search_flights = "prompts/flights.txt" }
    model = "myproject.models:cheaper"   # another model: module:attribute

Read with ``an.evals.load_variants(path)`` (a :class:`Variants`: a dict of names to agents,
with its ``baseline`` and ``file``), or given to ``python -m agentnb eval TASKS --variants
variants.toml``. A key this format does not know is refused with its line and the keys it
knows; so is a value of the wrong kind, a file that is missing, a tool the base agent does not
have. The experiment log keeps the file's text and digest with every evaluation of it.
"""

from __future__ import annotations

import importlib
import os
import re
import sys
import tomllib
from pathlib import Path
from typing import Any

from ..errors import ConfigurationError
from .log.identity import digest

__all__ = ["BASE_KEYS", "VARIANT_KEYS", "Variants", "load_variants"]

BASE_KEYS = ("base", "baseline", "variants")
VARIANT_KEYS = (
    "instructions",
    "instructions_file",
    "descriptions",
    "description_files",
    "model",
    "model_params",
    "max_iterations",
)


class Variants(dict[str, Any]):
    """Names → agents read from a variants file; ``baseline`` (the variant the others are
    compared with) and ``file`` (its path, text and digest, kept by the experiment log)."""

    def __init__(self, agents: dict[str, Any], baseline: str, file: dict[str, Any]) -> None:
        super().__init__(agents)
        self.baseline = baseline
        self.file = file

    def __repr__(self) -> str:
        return f"<Variants {list(self)} from {self.file['path']} (baseline {self.baseline!r})>"


def _line(text: str, key: str, table: str | None) -> int | None:
    """The line (from 1) where ``key`` is set in ``[table]`` (None: the top), best effort."""
    lines = text.split("\n")
    quoted = rf'(?:{re.escape(key)}|"{re.escape(key)}"|\'{re.escape(key)}\')'
    header = re.compile(r"^\s*\[+\s*([^\]]*?)\s*\]+")
    inside = table is None
    for number, line in enumerate(lines, 1):
        found = header.match(line)
        if found:
            name = found.group(1).replace('"', "").replace("'", "").replace(" ", "")
            full = f"{table}.{key}" if table else key
            if name == full or name.startswith(full + "."):
                return number
            inside = name == table
            continue
        if inside and re.match(rf"^\s*{quoted}\s*[=.]", line):
            return number
        if table and re.match(rf"^\s*{re.escape(table)}\.{quoted}\s*=", line):
            return number
    return None


def _refuse(path: Path, text: str, key: str, table: str | None, known: tuple[str, ...]) -> None:
    number = _line(text, key, table)
    where = f"{path}:{number}" if number else str(path)
    place = f"in [{table}]" if table else "at the top"
    raise ConfigurationError(
        f"{where}: unknown key {key!r} {place}; the keys this format knows: {', '.join(known)}"
    )


def _object(spec: str, what: str, where: str) -> Any:
    """What ``module:attribute`` names (imported from the working directory first)."""
    module, _, attribute = spec.partition(":")
    if not module or not attribute:
        raise ConfigurationError(f"{where}: {what} must be module:attribute, not {spec!r}")
    if "" not in sys.path and "." not in sys.path:
        sys.path.insert(0, "")
    try:
        value: Any = importlib.import_module(module)
        for part in attribute.split("."):
            value = getattr(value, part)
    except (ImportError, AttributeError) as exc:
        raise ConfigurationError(f"{where}: {what} {spec!r} cannot be loaded: {exc}") from None
    return value


def _read(folder: Path, name: str, where: str) -> str:
    path = folder / name
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigurationError(f"{where}: cannot read {path}: {exc}") from None


def _texts(value: Any, what: str, where: str) -> dict[str, str]:
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise ConfigurationError(f"{where}: {what} is a table of tool names to text")
    return dict(value)


def _variant(base: Any, name: str, spec: Any, folder: Path, path: Path, text: str) -> Any:
    table = f"variants.{name}"
    where = f"{path}:{_line(text, name, 'variants') or ''}".rstrip(":")
    if not isinstance(spec, dict):
        raise ConfigurationError(f"{where}: variant {name!r} is a table ([{table}])")
    for key in spec:
        if key not in VARIANT_KEYS:
            _refuse(path, text, key, table, VARIANT_KEYS)
    if "instructions" in spec and "instructions_file" in spec:
        raise ConfigurationError(f"{where}: give instructions or instructions_file, not both")
    changes: dict[str, Any] = {}
    if "instructions" in spec:
        if not isinstance(spec["instructions"], str):
            raise ConfigurationError(f"{where}: instructions is text")
        changes["instructions"] = spec["instructions"]
    if "instructions_file" in spec:
        changes["instructions"] = _read(folder, str(spec["instructions_file"]), where)
    descriptions = _texts(spec.get("descriptions", {}), "descriptions", where)
    for tool, file in _texts(spec.get("description_files", {}), "description_files", where).items():
        descriptions[tool] = _read(folder, file, where)
    if "model_params" in spec:
        if not isinstance(spec["model_params"], dict):
            raise ConfigurationError(f"{where}: model_params is a table (temperature = 0.2)")
        changes["model_params"] = {**base.model_params, **spec["model_params"]}
    if "max_iterations" in spec:
        changes["max_iterations"] = spec["max_iterations"]
    if "model" in spec:
        model = _object(str(spec["model"]), "model", where)
        changes["model"] = model() if callable(model) and not hasattr(model, "complete") else model
    try:
        return base.copy(descriptions=descriptions or None, **changes)
    except ConfigurationError as exc:
        raise ConfigurationError(f"{where}: variant {name!r}: {exc}") from None


def load_variants(path: str | os.PathLike[str]) -> Variants:
    """The variants a TOML file describes (see the module docstring)."""
    from ..agent import Agent

    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
        data = tomllib.loads(text)
    except OSError as exc:
        raise ConfigurationError(f"cannot read the variants file {path}: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigurationError(f"{path}: not TOML ({exc})") from None
    for key in data:
        if key not in BASE_KEYS:
            _refuse(path, text, key, None, BASE_KEYS)
    if not isinstance(data.get("base"), str):
        raise ConfigurationError(f'{path}: base = "module:attribute" names the base agent')
    made = _object(data["base"], "base", str(path))
    base = made() if callable(made) and not isinstance(made, Agent) else made
    if not isinstance(base, Agent):
        raise ConfigurationError(
            f"{path}: base {data['base']!r} is a {type(base).__name__}, not an Agent"
        )
    specs = data.get("variants")
    if not isinstance(specs, dict) or not specs:
        raise ConfigurationError(f"{path}: no [variants.NAME] table: name at least one variant")
    agents = {
        name: _variant(base, name, spec, path.parent, path, text) for name, spec in specs.items()
    }
    baseline = data.get("baseline", next(iter(agents)))
    if baseline not in agents:
        raise ConfigurationError(f"{path}: baseline {baseline!r} is not a variant: {list(agents)}")
    return Variants(agents, baseline, {"path": str(path), "text": text, "digest": digest(text)})
