"""The listing of the log: one row per experiment, read from the entries alone (no run)."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["COLUMNS", "frame"]

COLUMNS = [
    "id",
    "created",
    "kind",
    "variants",
    "success",
    "tasks",
    "tasks_digest",
    "variant_digests",
    "repeats",
    "runs",
    "spend",
    "commit",
    "dirty",
    "source",
    "note",
]


def _success(body: dict[str, Any]) -> str:
    parts = []
    for name in body.get("variant_order") or []:
        figures = (body.get("summary") or {}).get(name) or {}
        rate = figures.get("success_rate")
        parts.append(f"{name} {'—' if rate is None else f'{rate:.0%}'}")
    return " · ".join(parts)


def frame(entries: list[dict[str, Any]]) -> pd.DataFrame:
    """One row per experiment (the listing's columns, :data:`COLUMNS`)."""
    import pandas as pd

    rows = []
    for e in entries:
        body = e["body"]
        variants = body.get("variant_order") or []
        rows.append(
            {
                "id": e["id"],
                "created": pd.Timestamp(dt.datetime.fromtimestamp(e["created"])),
                "kind": e["kind"],
                "variants": ", ".join(variants),
                "success": _success(body),
                "tasks": len(body.get("task_digests") or {}),
                "tasks_digest": body.get("tasks_digest"),
                "variant_digests": ", ".join(
                    f"{v}:{(body.get('variants') or {}).get(v, {}).get('digest', '')}"
                    for v in variants
                ),
                "repeats": body.get("repeats"),
                "runs": body.get("runs"),
                "spend": body.get("spend"),
                "commit": body.get("commit"),
                "dirty": body.get("dirty"),
                "source": e["source"],
                "note": e["note"],
            }
        )
    return pd.DataFrame(rows, columns=COLUMNS)
