"""The loop, written once. ``run``, ``stream`` and ``step`` all drive this generator.

It yields after every stage; whoever drives it decides how far to go. The stages are
plain functions of the run in the sibling modules, in the order of DESIGN.md.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING

from .assemble import assemble
from .call_model import call_model
from .check_stop import check_stop
from .decide import decide
from .execute_tools import execute_tools
from .persist import persist
from .restore import restore

if TYPE_CHECKING:
    from .run import Run


async def stages(run: Run) -> AsyncGenerator[str, None]:
    """restore → (assemble → call_model → decide → [execute_tools] → check_stop)* → persist."""
    run.stage = "restore"
    await restore(run)
    yield "restore"
    while True:
        run.stage = "assemble"
        assemble(run)
        yield "assemble"
        run.stage = "call_model"
        await call_model(run)
        yield "call_model"
        run.stage = "decide"
        decide(run)
        yield "decide"
        if run.pending:
            run.stage = "execute_tools"
            await execute_tools(run)
            yield "execute_tools"
        run.stage = "check_stop"
        check_stop(run)
        yield "check_stop"
        if run.stop_reason is not None:
            break
    run.stage = "persist"
    run.finish_persist()
    yield "persist"


__all__ = ["persist", "stages"]
