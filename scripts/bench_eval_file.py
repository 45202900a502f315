"""Size of a saved evaluation: bytes per 200 runs of the travel task set (two variants).

.venv/bin/python scripts/bench_eval_file.py
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

import agentnb as an


async def main() -> None:
    tasks = an.travel.task_set()
    base = an.travel.travel_agent()
    variants = {"a": base, "b": base.copy(instructions=base.instructions + "\n回答要简洁。")}
    ev = await an.evaluate(variants, tasks, repeats=-(-200 // (2 * len(tasks))), progress=False)
    with tempfile.TemporaryDirectory() as tmp:
        for traces in (True, False):
            path = ev.save(Path(tmp) / "ev.jsonl", traces=traces)
            size = path.stat().st_size * 200 / len(ev.records)
            what = "with traces" if traces else "without traces"
            print(f"{len(ev.records)} runs saved {what}: {size / 1e6:.2f} MB per 200 runs")


if __name__ == "__main__":
    asyncio.run(main())
