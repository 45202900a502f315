"""What the recording proxy adds to a stream: time to first chunk and per-chunk latency.

A local upstream (a bare asyncio HTTP server in its own thread) streams Chat Completions
chunks, each stamped with ``time.monotonic()`` as it is written; the client (httpx, in the
main thread) reads them straight from the upstream and through ``an.observe.proxy``,
interleaved request by request. All three share one process, so the stamps and the arrival
times are on the same clock: per-chunk latency = arrival - stamp, exactly.

    python scripts/bench_proxy.py [--quick]      (also run by `make bench`)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import threading
import time

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
                    chunk = {"choices": [{"index": 0, "delta": delta}], "t": time.monotonic()}
                    if i == CHUNKS - 1:
                        chunk["choices"][0]["finish_reason"] = "stop"
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


async def _measure(requests: int) -> dict[str, dict[str, list[float]]]:
    out: dict[str, dict[str, list[float]]] = {
        "direct": {"first": [], "chunk": []},
        "proxy": {"first": [], "chunk": []},
    }
    with (
        StampingUpstream() as upstream,
        an.observe.proxy(upstream=f"http://127.0.0.1:{upstream.port}/v1") as proxy,
    ):
        urls = {
            "direct": f"http://127.0.0.1:{upstream.port}/v1/chat/completions",
            "proxy": f"{proxy.base_url}/chat/completions",
        }
        async with httpx.AsyncClient(timeout=30) as client:
            for name in urls:  # warm up: connections, imports, the proxy's first session
                await _one(client, urls[name], -1)
            for i in range(requests):
                order = ("direct", "proxy") if i % 2 else ("proxy", "direct")
                for name in order:
                    first, chunks = await _one(client, urls[name], i)
                    out[name]["first"].append(first)
                    out[name]["chunk"].extend(chunks)
        assert len(proxy.calls) == requests + 1 and all(c.ok for c in proxy.calls)
    return out


def proxy_overhead(quick: bool = False) -> dict[str, float]:
    """Print and return the proxy's added time to first chunk and per chunk (p50, p99, ms)."""
    requests = 40 if quick else 200
    data = asyncio.run(_measure(requests))
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
    return figures


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    proxy_overhead(parser.parse_args().quick)
