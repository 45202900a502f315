"""The recording proxy in JupyterLab + Chromium: an app in another process, its session view
growing in the notebook while it runs. Screenshots go to .artifacts/screenshots/."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.browser.lab import Notebook

pytest.importorskip("starlette", reason="the `observe` extra is not installed: make dev")

SETUP = """
import agentnb as an
upstream = an.observe.serve(delay=0.6)   # the travel stand-in, thinking 0.6 s per call
proxy = an.observe.proxy(upstream=upstream.base_url)
print(proxy.base_url)
"""
VIEW = "view = proxy.view(height=560)\nview"
CHECK = (
    "print(len(proxy.sessions), *[len(s) for s in proxy.sessions], "
    "all(s.is_valid for s in proxy.sessions), len(proxy.calls))"
)
SECOND = "print(view.picked == proxy.sessions[1].id, view.current.session.id)"
CELLS = [SETUP, VIEW, CHECK, SECOND]
APP = Path(__file__).with_name("observe_app.py")


def count(view) -> int:
    text = view.locator(".anb-counts").first.text_content() or ""
    m = re.match(r"([\d,]+) messages?", text)
    return int(m.group(1).replace(",", "")) if m else -1


@pytest.fixture(scope="module")
def nb(lab, context):
    name = lab.write_notebook("observe.ipynb", CELLS)
    page = context.new_page()
    notebook = Notebook(page, lab, name)
    yield notebook
    page.close()


def test_the_proxied_app_grows_its_session_view_live(nb):
    nb.run(0)
    base_url = nb.stdout(0).strip().splitlines()[-1]
    assert base_url.startswith("http://127.0.0.1:")
    nb.run(1)
    out = nb.output(1)
    out.locator(".anb-proxy").wait_for(timeout=30_000)
    assert "0 conversations" in out.text_content()
    app = subprocess.Popen([sys.executable, str(APP), base_url], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)  # fmt: skip
    seen: list[int] = []
    shots = 0
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and app.poll() is None:
        view = out.locator(".anb-session")
        if view.count():
            n = count(view)
            if n > 0 and (not seen or seen[-1] != n):
                seen.append(n)
                if len(seen) in (2, 4) and shots < 2:
                    shots += 1
                    nb.shot(f"observe-live-{shots}", out)
        time.sleep(0.05)
    stdout, stderr = app.communicate(timeout=60)
    assert app.returncode == 0, stderr
    _, first, second = stdout.split()
    nb.run(2)
    sessions, len1, len2, valid, calls = nb.stdout(2).split()
    assert (sessions, len1, len2, valid) == ("2", first, second, "True")
    view = out.locator(".anb-session")
    nb.page.wait_for_function(
        "([el, n]) => el.querySelector('.anb-counts').textContent.startsWith(n + ' messages')",
        arg=[view.element_handle(), int(first)],
        timeout=15_000,
    )
    # it grew while the other process ran: several sizes seen, in order, up to the end
    assert len(seen) >= 3 and seen == sorted(seen), seen
    assert seen[0] < int(first)
    head = out.locator(".anb-p-head").text_content()
    assert head.startswith("2 conversations") and f"{calls} model calls" in head
    assert "null" not in head and "undefined" not in head
    sizes = out.locator(".anb-p-row .anb-p-size").all_text_contents()
    assert [s.split(" · ")[0] for s in sizes] == [f"{first} messages", f"{second} messages"]
    assert out.locator(".anb-p-row").first.locator(".anb-muted").text_content().startswith("last:")
    apis = out.locator(".anb-p-row .anb-p-api").all_text_contents()
    assert apis == ["Chat Completions", "Chat Completions"]  # the API each came in on
    heads = out.locator(".anb-call > .anb-result").count()
    assert heads >= 1  # tool results shown under their calls
    nb.shot("observe-first-done", out)
    out.locator(".anb-p-row").nth(1).click()  # the browser picks: the kernel composes its view
    nb.page.wait_for_function(
        "([el, n]) => { const s = el.querySelector('.anb-session .anb-counts');"
        " return s && s.textContent.startsWith(n + ' messages'); }",
        arg=[out.element_handle(), int(second)],
        timeout=15_000,
    )
    nb.shot("observe-second-conversation", out)
    nb.run(3)
    assert nb.stdout(3).split()[0] == "True"
    text = out.text_content()
    assert "sk-browser-test-key" not in text and "sk-browser-test-key" not in nb.page.content()
