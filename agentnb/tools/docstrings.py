"""Reading a tool's description and parameter docs from its docstring (Google or Sphinx)."""

from __future__ import annotations

import inspect
import re
from typing import Any

__all__ = ["parse_docstring", "strip_titles"]

_SECTION = re.compile(r"^\s*(Args|Arguments|Parameters|Params|Returns|Raises|Examples?)\s*:?\s*$")
_GOOGLE_ARG = re.compile(r"^\s{0,8}(\*{0,2}\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")
_SPHINX_ARG = re.compile(r"^\s*:param\s+(?:\w+\s+)?(\w+)\s*:\s*(.*)$")


def parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """Split a docstring into (description, {parameter: description})."""
    lines = inspect.cleandoc(doc).splitlines()
    description: list[str] = []
    params: dict[str, str] = {}
    section = ""
    current = ""
    for line in lines:
        sphinx = _SPHINX_ARG.match(line)
        if sphinx:
            current, section = sphinx.group(1), "args"
            params[current] = sphinx.group(2).strip()
            continue
        header = _SECTION.match(line)
        if header:
            section = "args" if header.group(1).startswith(("Arg", "Param")) else "other"
            current = ""
            continue
        if section == "args":
            arg = _GOOGLE_ARG.match(line)
            indent = len(line) - len(line.lstrip())
            if arg and (indent <= 8) and not (current and indent > 4 and line.strip()):
                current = arg.group(1).lstrip("*")
                params[current] = arg.group(2).strip()
            elif current and line.strip():
                params[current] = (params[current] + " " + line.strip()).strip()
        elif section == "" and not line.lstrip().startswith(":"):
            description.append(line)
    text = "\n".join(description).strip()
    return text, params


def strip_titles(schema: Any, in_mapping: bool = False) -> Any:
    if isinstance(schema, dict):
        if in_mapping:
            return {k: strip_titles(v) for k, v in schema.items()}
        return {
            k: strip_titles(v, in_mapping=k in ("properties", "$defs"))
            for k, v in schema.items()
            if not (k == "title" and isinstance(v, str))
        }
    if isinstance(schema, list):
        return [strip_titles(v) for v in schema]
    return schema
