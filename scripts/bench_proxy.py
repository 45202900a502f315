"""What the recording proxy adds to a stream: time to first chunk and per-chunk latency.

A local upstream (a bare asyncio HTTP server) streams Chat Completions chunks, each stamped
with ``time.monotonic()`` as it is written; the client (httpx) reads them straight from the
upstream and through ``an.observe.proxy``, interleaved request by request. Upstream, proxy
and client are three processes (in one, they would queue for one GIL), and Linux's
monotonic clock is system-wide: per-chunk latency = arrival - stamp, exactly.

    python scripts/bench_proxy.py [--quick]      (also run by `make bench`)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from typing import Any

import httpx

import agentnb as an

CHUNKS = 20
GAP = 0.002  # seconds between the upstream's chunks


class StampingUpstream:
    """POST /v1/chat/completions -> CHUNKS SSE chunks, GAP apart, each carrying its send time."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.port = 0

    def __enter__(self) -> StampingUpstream:
        self.thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self.loop).result(5)
        return self

    def __exit__(self, *exc: object) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)

    async def _start(self) -> None:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":", 1)[1])
                await reader.readexactly(length)
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                             b"Transfer-Encoding: chunked\r\n\r\n")  # fmt: skip
                for i in range(CHUNKS):
                    await asyncio.sleep(GAP)
                    delta = {"role": "assistant"} if i == 0 else {"content": f"t{i} "}
                    choice: dict[str, Any] = {"index": 0, "delta": delta}
                    if i == CHUNKS - 1:
                        choice["finish_reason"] = "stop"
                    chunk = {"choices": [choice], "t": time.monotonic()}
                    data = f"data: {json.dumps(chunk)}\n\n".encode()
                    writer.write(b"%x\r\n%s\r\n" % (len(data), data))
                    await writer.drain()
                done = b"data: [DONE]\n\n"
                writer.write(b"%x\r\n%s\r\n0\r\n\r\n" % (len(done), done))
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()


async def _one(client: httpx.AsyncClient, url: str, n: int) -> tuple[float, list[float]]:
    """One request: a new conversation (the proxy threads and records each)."""
    body = {"model": "bench", "stream": True, "messages": [{"role": "user", "content": f"go {n}"}]}
    started = time.monotonic()
    first: float | None = None
    latencies: list[float] = []
    pending = b""
    async with client.stream("POST", url, json=body) as response:
        async for part in response.aiter_raw():
            now = time.monotonic()
            first = now - started if first is None else first
            pending += part
            *events, pending = pending.split(b"\n\n")
            for event in events:
                payload = event.removeprefix(b"data: ")
                if payload != b"[DONE]":
                    latencies.append(now - json.loads(payload)["t"])
    assert first is not None and len(latencies) == CHUNKS
    return first, latencies


def _p(values: list[float], q: float) -> float:
    return (
        statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]
        if q < 100
        else max(values)
    )


async def _measure(
    requests: int,
) -> tuple[dict[str, dict[str, list[float]]], tuple[float, float]]:
    """The samples each way, and the proxy process's CPU seconds per proxied request."""
    out: dict[str, dict[str, list[float]]] = {
        "direct": {"first": [], "chunk": []},
        "proxy": {"first": [], "chunk": []},
    }
    upstream = _Child("--upstream")
    proxy = _Child("--proxy", upstream.url)
    try:
        urls = {
            "direct": f"{upstream.url}/chat/completions",
            "proxy": f"{proxy.url}/chat/completions",
        }
        async with httpx.AsyncClient(timeout=30) as client:
            for name in urls:  # warm up: connections, imports, the proxy's first session
                await _one(client, urls[name], -1)
            proxy.say("measure")
            for i in range(requests):
                order = ("direct", "proxy") if i % 2 else ("proxy", "direct")
                for name in order:
                    first, chunks = await _one(client, urls[name], i)
                    out[name]["first"].append(first)
                    out[name]["chunk"].extend(chunks)
    finally:
        user, system, calls = proxy.close().split()
        upstream.close()
    assert int(calls) == requests
    return out, (float(user) / requests, float(system) / requests)


class _Child:
    """This script in another process, serving until its stdin closes."""

    def __init__(self, *args: str) -> None:
        self.process = subprocess.Popen([sys.executable, __file__, *args], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True)  # fmt: skip
        assert self.process.stdout is not None and self.process.stdin is not None
        self.stdin, self.stdout = self.process.stdin, self.process.stdout
        self.url = self.stdout.readline().strip()

    def say(self, line: str) -> None:
        self.stdin.write(line + "\n")
        self.stdin.flush()

    def close(self) -> str:
        self.stdin.close()
        rest = self.stdout.read()
        self.process.wait(30)
        return rest


def _serve(what: str, upstream: str | None) -> None:
    if what == "upstream":
        with StampingUpstream() as server:
            print(f"http://127.0.0.1:{server.port}/v1", flush=True)
            sys.stdin.read()
        return
    assert upstream is not None
    with an.observe.proxy(upstream=upstream) as proxy:
        print(proxy.base_url, flush=True)
        sys.stdin.readline()  # the warm-up is done: count the CPU from here
        before = os.times()
        sys.stdin.read()
        after = os.times()
        cpu = f"{after.user - before.user} {after.system - before.system}"
        assert all(c.ok for c in proxy.calls), [c.error for c in proxy.calls if not c.ok]
        print(cpu, len(proxy.calls) - 1, flush=True)


def proxy_overhead(quick: bool = False) -> dict[str, float]:
    """Print and return the proxy's added time to first chunk and per chunk (p50, p99, ms)."""
    requests = 40 if quick else 200
    data, cpu = asyncio.run(_measure(requests))
    figures: dict[str, float] = {}
    load = os.getloadavg()[0] / (os.cpu_count() or 1)
    print(f"\nRecording proxy overhead: {requests} streamed requests each way, interleaved, "
          f"{CHUNKS} chunks {GAP * 1000:.0f} ms apart, local upstream (ms; machine load "
          f"{load:.1f} per core: above 1, wall times include waiting for a CPU)")  # fmt: skip
    print(f"  {'':<26}{'direct p50':>11}{'proxy p50':>11}{'added p50':>11}"
          f"{'direct p99':>11}{'proxy p99':>11}{'added p99':>11}   target")  # fmt: skip
    for key, label, target in (("first", "time to first chunk", "<= 2 ms p50"),
                               ("chunk", "latency per chunk", "<= 1 ms p50")):  # fmt: skip
        d50, p50 = _p(data["direct"][key], 50), _p(data["proxy"][key], 50)
        d99, p99 = _p(data["direct"][key], 99), _p(data["proxy"][key], 99)
        figures[f"{key}_p50"], figures[f"{key}_p99"] = p50 - d50, p99 - d99
        cells = [d50, p50, p50 - d50, d99, p99, p99 - d99]
        print(f"  {label:<26}" + "".join(f"{v * 1e3:>11.3f}" for v in cells) + f"   {target}")
    user, system = cpu
    figures["user_cpu_per_request"], figures["system_cpu_per_request"] = user, system
    print(
        f"  the proxy process's CPU per streamed request of {CHUNKS} chunks: {user * 1e3:.2f} ms"
        f" user (Python: HTTP both ways, recording), {system * 1e3:.2f} ms system (sockets)"
    )
    return figures


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--upstream", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--proxy", metavar="UPSTREAM", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.upstream or args.proxy:
        _serve("upstream" if args.upstream else "proxy", args.proxy)
    else:
        proxy_overhead(args.quick)
