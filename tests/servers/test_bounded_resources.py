"""Every byte bounded, every phase under one deadline (hostile round 3, class 2), against a
hostile server on 127.0.0.1: a 1 GB reply, a gzip bomb and an endless stream end in a typed
error with peak RSS under 300 MB; a dripping server ends within total_timeout + 1 s in every
phase (headers, body, stream, the profile probe)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time

import pytest

from agentnb.errors import ModelError
from agentnb.models import ModelRequest
from agentnb.models.openai import OpenAIModel
from agentnb.models.openai.retry import RetryPolicy
from tests.servers.hostile_server import HostileServer

REQ = ModelRequest([{"role": "user", "content": "hi"}])

# Runs in a child so its peak RSS is its own; an address-space cap keeps an unbounded client
# (main before this fix reached 4.1 GB) from hurting the machine: it fails with MemoryError.
CLIENT = """
import asyncio, resource, sys
resource.setrlimit(resource.RLIMIT_AS, (1 << 31, 1 << 31))
from agentnb.models import ModelRequest
from agentnb.models.openai import OpenAIModel
from agentnb.models.openai.retry import RetryPolicy

async def main():
    url, stream = sys.argv[1], sys.argv[2] == "1"
    model = OpenAIModel("m", base_url=url, profile="generic", stream=stream,
                        retry=RetryPolicy(attempts=1), total_timeout=60)
    request = ModelRequest([{"role": "user", "content": "hi"}])
    try:
        if stream:
            async for _ in model.stream(request):
                pass
        else:
            await model.complete(request)
        print("NO ERROR")
    except BaseException as exc:
        print("ERROR", type(exc).__name__, str(exc)[:300].replace(chr(10), " "))
    # VmHWM: this process's own peak since exec (ru_maxrss also counts the image forked from
    # the parent before exec, so a big pytest process made a small client look big)
    hwm = next(line for line in open("/proc/self/status") if line.startswith("VmHWM"))
    print("RSS_MB", int(hwm.split()[1]) // 1024)

asyncio.run(main())
"""


def run_client(url: str, stream: bool) -> tuple[str, int]:
    done = subprocess.run(
        [sys.executable, "-c", CLIENT, url, "1" if stream else "0"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    lines = done.stdout.splitlines()
    rss = next(int(line.split()[1]) for line in lines if line.startswith("RSS_MB"))
    return lines[0], rss


@pytest.mark.parametrize(
    ("mode", "stream"),
    [("huge", False), ("gzip-bomb", False), ("huge-stream", True), ("gzip-bomb", True)],
)
def test_unbounded_reply_a_1gb_body_or_a_gzip_bomb_is_a_typed_error_in_300mb(mode, stream):
    with HostileServer(mode) as server:
        outcome, rss = run_client(server.base_url, stream)
    assert outcome.startswith("ERROR ModelResponseError"), outcome
    assert "max_response_bytes" in outcome
    assert rss < 300, f"peak RSS {rss} MB"


@pytest.mark.parametrize(
    ("mode", "stream", "profile"),
    [
        ("drip-headers", False, "generic"),
        ("drip-headers", True, "generic"),
        ("drip-body", False, "generic"),
        ("drip-stream", True, "generic"),
        ("drip-models", False, "auto"),
        ("drip-models", True, "auto"),
    ],
)
async def test_phase_outside_the_deadline_a_dripping_server_ends_in_time(mode, stream, profile):
    with HostileServer(mode) as server:
        model = OpenAIModel(
            "m", base_url=server.base_url, profile=profile, stream=stream, timeout=30,
            total_timeout=2.0, retry=RetryPolicy(attempts=3, initial=0.1),
        )  # fmt: skip
        started = time.monotonic()

        async def call() -> None:
            if stream:
                async for _ in model.stream(REQ):
                    pass
            else:
                await model.complete(REQ)

        try:
            await asyncio.wait_for(call(), 12)
        except ModelError:
            pass  # typed: the deadline passed (or the probe gave way and the call answered)
        except TimeoutError:
            pytest.fail(f"{mode}: still waiting after 12 s with total_timeout=2")
        elapsed = time.monotonic() - started
    assert elapsed < 3.0, f"{mode} (stream={stream}) took {elapsed:.1f} s"
