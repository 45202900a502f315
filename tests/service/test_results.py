"""Results are whole on every backend, and a Runtime can be made again after close()."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import agentnb as an
from agentnb.service import DBOS
from tests.service.test_ids import _agent


def _runtime(kind: str, folder: Path) -> an.Runtime:
    folder.mkdir(exist_ok=True)
    backend = DBOS(f"sqlite:///{folder / 'dbos.db'}", polling=0.05) if kind == "dbos" else None
    return an.Runtime(_agent(), store=an.SQLiteStore(folder / "app.db"), backend=backend)


def _shape(result: an.RunResult) -> dict[str, Any]:
    return {
        "roles": [m.role for m in result.messages],
        "tool_calls": len(result.tool_calls),
        "usage": result.usage,
        "stop": (result.stop_reason, result.stop_detail, result.output, result.iterations),
        "events": [e.type for e in result.events],
        "type": type(result).__name__,
    }


async def test_result_has_the_same_shape_on_both_backends(tmp_path: Path) -> None:
    shapes = []
    for kind in ("inprocess", "dbos"):
        rt = _runtime(kind, tmp_path / kind)
        task_id = await rt.submit("s", "北京")
        info = await rt.wait(task_id, timeout=60)
        result = rt.result(task_id)
        assert result.messages and result.messages[0].role == "user"
        assert result.usage.total_tokens == info.tokens
        assert result.session is rt.session("s")
        shapes.append(_shape(result))
        await rt.close()
    here, there = shapes
    assert here == there
    assert here["roles"] == ["user", "assistant", "tool", "assistant"] and here["tool_calls"] == 1


@pytest.mark.parametrize("kind", ["inprocess", "dbos"])
async def test_a_runtime_again_after_close(tmp_path: Path, kind: str) -> None:
    """A re-run notebook cell makes a second Runtime in the same process and loop."""
    for life in range(2):
        rt = _runtime(kind, tmp_path / f"{kind}{life}")
        info = await rt.wait(await rt.submit("s", "北京"), timeout=60)
        assert (info.status, info.output) == ("done", "G1")
        await rt.close()
