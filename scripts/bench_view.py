"""What the live view costs: bytes sent per message, and time to first render in Chromium.

    make bench            # runs this after scripts/bench.py
    python scripts/bench_view.py [--appends 3000] [--messages 5000] [--no-browser]

Figures printed:
  * 3,000 appends of ~400-character messages to a session shown in a SessionView, the
    comm replaced by a recorder: bytes of the custom messages (per append and in total),
    of the snapshot refreshes, and both against the messages' own JSON;
  * one run of the travel assistant: bytes per appended message, events included;
  * a 5,000-message session in JupyterLab + headless Chromium (Debian's /usr/bin/chromium):
    time from running the cell to the first card drawn, DOM size and frame times while
    scrolling, time to filter by a search.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import comm

import agentnb as an
from agentnb.widgets import SessionView

ROOT = Path(__file__).resolve().parents[1]
WORDS = "北京上海航班天气酒店预算出差周五晴多云小雨机票价格合计元起飞到达经济舱商务舱推荐备选"


class Recorder:
    """A comm that records what a widget would send to the browser."""

    kernel = "recorder"

    def __init__(self, **kwargs: Any) -> None:
        self.comm_id = uuid.uuid4().hex
        self.sent: list[tuple[Any, list[bytes]]] = []

    def on_msg(self, callback: Any) -> None:
        pass

    def send(self, data: Any = None, metadata: Any = None, buffers: Any = None) -> None:
        self.sent.append((data, [bytes(b) for b in buffers or ()]))

    def close(self, *args: Any, **kwargs: Any) -> None:
        pass

    def bytes(self, method: str) -> int:
        total = 0
        for data, buffers in self.sent:
            if data.get("method") == method:
                total += len(json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode())
                total += sum(len(b) for b in buffers)
        return total


def _json_size(wire: Any) -> int:
    return len(json.dumps(wire, ensure_ascii=False, separators=(",", ":")).encode())


def _text(rng: random.Random, n: int) -> str:
    return "".join(
        rng.choice(WORDS) if rng.random() < 0.7 else str(rng.randint(0, 9999)) for _ in range(n)
    )[:n]


def appends(n: int) -> None:
    recorders: list[Recorder] = []
    comm.create_comm = lambda **kw: recorders.append(Recorder(**kw)) or recorders[-1]  # type: ignore[assignment]
    session = an.Session()
    view = SessionView(session)
    rec = recorders[-1]
    rec.sent.clear()  # count only what the appends cause
    rng = random.Random(7)
    t0 = time.perf_counter()
    own = 0
    for i in range(n):
        role = "user" if i % 2 else "assistant"
        own += _json_size(session.append({"role": role, "content": _text(rng, 400)}).wire())
    elapsed = time.perf_counter() - t0
    custom = rec.bytes("custom")
    view.refresh()  # what the end of a run sends
    snapshot = rec.bytes("update")
    print(f"{n:,} appends of ~400-character messages (messages' own JSON {own / 1e6:.2f} MB):")
    print(
        f"  custom messages: {custom / 1e6:.2f} MB, {custom / n:.0f} B per append "
        f"({custom / own:.2f}x the messages' JSON; {elapsed / n * 1e6:.0f} µs per append)"
    )
    print(f"  one snapshot refresh at the end: {snapshot / 1e6:.2f} MB (zlib)")
    print(
        f"  total: {(custom + snapshot) / 1e6:.2f} MB = {(custom + snapshot) / own:.2f}x "
        "the messages' own JSON (target: within 2x)"
    )
    view.close()

    # A real run: events travel too (one small message each).
    session = an.Session()
    view = SessionView(session)
    rec = recorders[-1]
    rec.sent.clear()
    asyncio.run(
        an.travel.travel_agent().run("我周五从上海去北京出差，预算3000以内", session=session)
    )
    own = sum(_json_size(w) for w in session.wire())
    custom = rec.bytes("custom")
    total = custom + rec.bytes("update")
    print(
        f"one travel run ({len(session)} messages, {view.seq} custom messages): "
        f"{custom / 1e3:.1f} kB custom + snapshot = {total / 1e3:.1f} kB; "
        f"the messages' JSON is {own / 1e3:.1f} kB"
    )
    view.close()


def browser(n: int) -> None:
    sys.path.insert(0, str(ROOT / "tests" / "browser"))
    from lab import CHROMIUM, chromium, running_lab
    from perf import measure

    try:
        import playwright  # noqa: F401
    except ImportError:
        print("browser figures skipped: the playwright package is missing (make dev)")
        return
    if not Path(CHROMIUM).exists():
        print(f"browser figures skipped: {CHROMIUM} is missing (make test-browser installs it)")
        return
    with tempfile.TemporaryDirectory() as tmp, running_lab(Path(tmp)) as lab, chromium() as b:
        page = b.new_page(viewport={"width": 1280, "height": 1200})
        m = measure(page, lab, n)
    print(f"{n:,}-message session in JupyterLab + headless Chromium:")
    print(
        f"  first card drawn {m['first_render_ms']:.0f} ms after running the cell "
        f"(target: under 1 s); {m['kernel']}"
    )
    print(
        f"  scrolling top to bottom: at most {m['max_nodes']} DOM nodes, {m['max_cards']} cards; "
        f"frame median {m['median_frame_ms']:.1f} ms, p95 {m['p95_frame_ms']:.1f} ms"
    )
    print(f"  search over all messages: {m['search_ms']:.0f} ms ({m['search_shown']})")


def matrix(tasks: int = 30, repeats: int = 5) -> None:
    """The live matrix of a 600-run sweep: bytes sent per finished run (batched updates)."""
    import asyncio

    from agentnb.travel import INSTRUCTIONS, TravelModel
    from agentnb.widgets import EvalMatrix

    recorders: list[Recorder] = []
    comm.create_comm = lambda **kw: recorders.append(Recorder(**kw)) or recorders[-1]  # type: ignore[assignment]
    base = an.travel.travel_agent()
    rule = next(line for line in INSTRUCTIONS.splitlines(True) if "必须使用工具" in line)
    variants = {
        "article": base,
        "no_tools_rule": base.copy(instructions=INSTRUCTIONS.replace(rule, ""),
                                   model=TravelModel("fabricate")),
        "loop": base.copy(model=TravelModel("loop")),
        "hot": base.copy(model=TravelModel(temperature=0.8)),
    }  # fmt: skip
    task_set = an.TaskSet(list(an.travel.task_set())[:tasks])

    async def sweep() -> tuple[Any, Any]:
        ev = an.evals.start(variants, task_set, repeats=repeats)
        view = EvalMatrix(ev)
        await ev.wait()
        return ev, view

    t0 = time.perf_counter()
    ev, view = asyncio.run(sweep())
    elapsed = time.perf_counter() - t0
    rec = recorders[-1]
    custom, update = rec.bytes("custom"), rec.bytes("update")
    runs = len(ev.records)
    print(f"The live matrix of a {runs}-run sweep ({tasks} tasks x 4 variants x {repeats} "
          f"repeats, {elapsed:.1f} s):")  # fmt: skip
    print(f"  {view.updates} batched updates, {custom / 1e3:.1f} KB of custom messages, "
          f"{custom / runs:.0f} B per finished run; the saved copy "
          f"{update / 1e3:.1f} KB")  # fmt: skip


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--appends", type=int, default=3000)
    parser.add_argument("--messages", type=int, default=5000)
    parser.add_argument("--no-browser", action="store_true")
    args = parser.parse_args(argv)
    appends(args.appends)
    matrix()
    if not args.no_browser:
        browser(args.messages)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
