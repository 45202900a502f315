"""Arguments checked against a JSON schema given as is (a catalogue's, an OpenAI tool dict's,
an MCP server's): the schema the model sees is the one that validates.

``jsonschema`` does the validating (the dialect named by ``$schema``, else 2020-12, with
``format`` checked); each failure becomes ``{"field": "a.b[0]", "problem": ...}`` like those of
typed tools, so the model reads one shape of ``invalid_arguments`` whatever defined the tool.
"""

from __future__ import annotations

import json
from typing import Any

from ..errors import ToolDefinitionError

__all__ = ["InvalidArguments", "SchemaValidator"]


class InvalidArguments(ValueError):
    """A call's arguments do not fit its tool: ``problems`` are ``{"field", "problem"}`` rows."""

    def __init__(self, problems: list[dict[str, str]]) -> None:
        super().__init__("; ".join(f"{p['field']}: {p['problem']}" for p in problems))
        self.problems = problems


def _field(path: Any) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(arguments)"


class SchemaValidator:
    """Validates argument objects against one JSON schema (built once per tool)."""

    def __init__(self, schema: dict[str, Any], tool_name: str) -> None:
        import jsonschema  # lazily: `import agentnb` stays light

        if not isinstance(schema, dict) or schema.get("type", "object") != "object":
            raise ToolDefinitionError(
                f"the parameters of tool {tool_name!r} must be a JSON schema of type "
                f"'object' (the model passes arguments by name), got {schema!r:.200}"
            )
        cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        try:
            cls.check_schema(schema)
        except jsonschema.SchemaError as exc:
            where = _field(exc.absolute_path)
            raise ToolDefinitionError(
                f"the parameters of tool {tool_name!r} are not a valid JSON schema "
                f"(at {where}: {exc.message})"
            ) from None
        self._validator = cls(schema, format_checker=cls.FORMAT_CHECKER)

    def problems(self, arguments: dict[str, Any]) -> list[dict[str, str]]:
        rows = []
        for err in sorted(self._validator.iter_errors(arguments), key=lambda e: list(e.path)):
            field = _field(err.absolute_path)
            if err.validator == "required":
                missing = [n for n in err.validator_value if n not in (err.instance or {})]
                for name in missing:
                    where = f"{field}.{name}" if err.absolute_path else name
                    rows.append({"field": where, "problem": "required argument is missing"})
                continue
            if err.validator == "additionalProperties" and isinstance(err.instance, dict):
                known = err.schema.get("properties", {})
                patterns = err.schema.get("patternProperties", {})
                for name in err.instance:
                    if name not in known and not patterns:
                        where = f"{field}.{name}" if err.absolute_path else name
                        rows.append(
                            {"field": where, "problem": "unexpected argument (not in the schema)"}
                        )
                continue
            got = json.dumps(err.instance, ensure_ascii=False, default=str)
            problem = err.message if len(got) > 80 else f"{err.message} (got {got})"
            if err.message.startswith((got, repr(err.instance))):  # it names the value already
                problem = err.message
            rows.append({"field": field, "problem": problem})
        return rows

    def validate(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """``arguments`` unchanged when they fit, else :class:`InvalidArguments`."""
        rows = self.problems(arguments)
        if rows:
            raise InvalidArguments(rows)
        return arguments
