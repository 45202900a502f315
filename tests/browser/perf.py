"""The 5,000-message measurements, shared by the browser test and scripts/bench_view.py."""

from __future__ import annotations

from typing import Any

from tests.browser.lab import Lab, Notebook

BUILD = """
import json, time
import agentnb as an
from agentnb.widgets import SessionView

import random
rng = random.Random(5)
WORDS = "北京上海杭州航班天气酒店预算出差周五周六晴多云小雨机票价格合计元起飞到达经济舱推荐备选"

def words(n):  # varied text, so the snapshot compresses like real transcripts do
    return "".join(rng.choice(WORDS) if rng.random() < 0.8 else str(rng.randint(0, 999)) for _ in range(n))

def turn(i):
    call = {"id": f"c{i}", "type": "function", "function": {"name": "search_weather",
            "arguments": json.dumps({"city": "北京", "date": "周五", "turn": i}, ensure_ascii=False)}}
    result = {"city": "北京", "condition": words(6), "temp_min_c": rng.randint(-9, 0),
              "temp_max_c": rng.randint(1, 12), "note": words(120), "turn": i}
    return [
        {"role": "user", "content": f"第{i}个问题：" + words(60)},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": f"c{i}", "name": "search_weather",
         "content": json.dumps(result, ensure_ascii=False)},
        {"role": "assistant", "content": words(150) + f"（第{i}轮）"},
    ]

big = an.Session(id="big")
for i in range(N // 4):
    big.extend(turn(i))
print(len(big))
"""
SHOW = """own = sum(len(json.dumps(w, ensure_ascii=False).encode()) for w in big.wire())
t0 = time.perf_counter()
big_view = SessionView(big)
took = time.perf_counter() - t0
print(f"kernel {took:.3f} s, snapshot {len(big_view.snapshot):,} bytes (zlib) for {own:,} bytes of messages")
big_view"""

# Run cell i and time until the first message card of its output is drawn.
_FIRST_RENDER = """async (i) => {
  const app = window.jupyterapp;
  const nb = app.shell.currentWidget.content;
  nb.activeCellIndex = i;
  nb.deselectAll();
  const t0 = performance.now();
  const done = app.commands.execute("notebook:run-cell");
  const cell = nb.widgets[i];
  await new Promise((resolve) => {
    const tick = () => cell.node.querySelector(".anb-session .anb-card[data-index]")
      ? resolve() : requestAnimationFrame(tick);
    tick();
  });
  const ms = performance.now() - t0;
  await done;
  return ms;
}"""

# Scroll top -> bottom one step per frame; report frame gaps and the DOM size seen.
_SCROLL = """async (root) => {
  const sc = root.querySelector(".anb-scroll");
  const frame = () => new Promise((r) => requestAnimationFrame(r));
  const sizes = [];
  const cards = [];
  const gaps = [];
  const visible = [];
  sc.scrollTop = 0;
  await frame(); await frame();
  let last = performance.now();
  const steps = 80;
  for (let s = 0; s <= steps; s++) {
    sc.scrollTop = (sc.scrollHeight - sc.clientHeight) * s / steps;
    await frame();
    const now = performance.now();
    gaps.push(now - last);
    last = now;
    sizes.push(root.querySelectorAll("*").length);
    cards.push(root.querySelectorAll(".anb-card").length);
    const keys = [...sc.querySelectorAll(".anb-rows > [data-key]")].map((e) => e.dataset.key);
    visible.push(keys.length ? [keys[0], keys[keys.length - 1]] : null);
  }
  gaps.sort((a, b) => a - b);
  return {
    max_nodes: Math.max(...sizes),
    max_cards: Math.max(...cards),
    median_frame_ms: gaps[Math.floor(gaps.length / 2)],
    p95_frame_ms: gaps[Math.floor(gaps.length * 0.95)],
    first: visible[0],
    middle: visible[Math.floor(steps / 2)],
    last: visible[steps],
  };
}"""

# Type into the search box and time until the filtered list is drawn.
_SEARCH = """async ([root, query]) => {
  const box = root.querySelector(".anb-search");
  const t0 = performance.now();
  box.value = query;
  box.dispatchEvent(new Event("input"));
  await new Promise((resolve) => {
    const tick = () => /^\\d+ shown/.test(root.querySelector(".anb-shown").textContent)
      ? resolve() : requestAnimationFrame(tick);
    tick();
  });
  const ms = performance.now() - t0;
  const shown = root.querySelector(".anb-shown").textContent;
  box.value = "";
  box.dispatchEvent(new Event("input"));
  return [ms, shown];
}"""


def measure(page: Any, lab: Lab, n: int = 5000) -> dict[str, Any]:
    """Open a notebook with an ``n``-message session and measure its view in the browser."""
    name = lab.write_notebook(f"big{n}.ipynb", [f"N = {n}\n" + BUILD, SHOW])
    nb = Notebook(page, lab, name)
    nb.run(0)
    assert nb.stdout(0).strip() == str(n), nb.stdout(0)
    first_ms = page.evaluate(_FIRST_RENDER, 1)
    root = nb.output(1).locator(".anb-session")
    page.wait_for_timeout(300)
    header = root.locator(".anb-counts").text_content()
    scroll = root.evaluate(_SCROLL)
    search_ms, shown = page.evaluate(_SEARCH, [root.element_handle(), f"第{n // 8}个问题："])
    nb.shot(f"big-{n}", root)
    return {
        "messages": n,
        "first_render_ms": round(first_ms, 1),
        "kernel": nb.stdout(1).strip(),
        "header": header,
        "search_ms": round(search_ms, 1),
        "search_shown": shown,
        **scroll,
    }
