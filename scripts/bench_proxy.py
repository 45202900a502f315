"""What the recording proxy adds to a stream: time to first event and per-event latency, for
each API it records (Chat Completions, the Responses API, Anthropic Messages).

A local upstream (a bare asyncio HTTP server) streams events in the format the request's path
names, each stamped with ``time.monotonic()`` as it is written; the client (httpx) reads them
straight from the upstream and through ``an.observe.proxy``, interleaved request by request.
Upstream, proxy and client are three processes (in one, they would queue for one GIL), and
Linux's monotonic clock is system-wide: per-event latency = arrival - stamp, exactly.

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


#: The APIs measured: the path each is posted to, and a request body of it.
APIS = {
    "chat": ("/chat/completions", {"model": "bench", "stream": True}),
    "responses": ("/responses", {"model": "bench", "stream": True}),
    "anthropic": ("/messages", {"model": "bench", "max_tokens": 64, "stream": True}),
}


def _events(api: str) -> list[tuple[str | None, dict[str, Any]]]:
    """CHUNKS events of a streamed reply in ``api``'s format, without their stamps."""
    text = [f"t{i} " for i in range(CHUNKS - 2)]
    if api == "chat":
        first: list[tuple[str | None, dict[str, Any]]] = [
            (None, {"choices": [{"index": 0, "delta": {"role": "assistant"}}]})
        ]
        middle = [(None, {"choices": [{"index": 0, "delta": {"content": t}}]}) for t in text]
        last = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
        return [*first, *middle, (None, last)]
    if api == "responses":
        response = {
            "id": "resp_bench",
            "object": "response",
            "status": "in_progress",
            "model": "bench",
            "output": [],
        }
        done = {
            **response,
            "status": "completed",
            "output": [
                {
                    "type": "message",
                    "id": "msg_b",
                    "status": "completed",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": "".join(text), "annotations": []}],
                }
            ],
            "usage": {"input_tokens": 3, "output_tokens": CHUNKS, "total_tokens": CHUNKS + 3},
        }
        delta = {"item_id": "msg_b", "output_index": 0, "content_index": 0}
        return [
            ("response.created", {"type": "response.created", "response": response}),
            *[
                (
                    "response.output_text.delta",
                    {"type": "response.output_text.delta", **delta, "delta": t},
                )
                for t in text
            ],
            ("response.completed", {"type": "response.completed", "response": done}),
        ]
    message = {
        "id": "msg_bench",
        "type": "message",
        "role": "assistant",
        "model": "bench",
        "content": [],
        "stop_reason": None,
        "usage": {"input_tokens": 3, "output_tokens": 1},
    }
    return [
        ("message_start", {"type": "message_start", "message": message}),
        *[
            (
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "text_delta", "text": t},
                },
            )
            for t in text
        ],
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn"},
                "usage": {"output_tokens": CHUNKS},
            },
        ),
    ]


class StampingUpstream:
    """POST .../<api path> -> CHUNKS events of that API, GAP apart, each with its send time."""

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
                path = head.split(b" ", 2)[1].decode()
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":", 1)[1])
                await reader.readexactly(length)
                api = next(name for name, (end, _) in APIS.items() if path.endswith(end))
                writer.write(
                    b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                    b"Transfer-Encoding: chunked\r\n\r\n"
                )
                for name, payload in _events(api):
                    await asyncio.sleep(GAP)
                    head_line = f"event: {name}\n" if name else ""
                    data = f"{head_line}data: {json.dumps({**payload, 't': time.monotonic()})}\n\n"
                    writer.write(b"%x\r\n%s\r\n" % (len(data), data.encode()))
                    await writer.drain()
                ending = (
                    b"data: [DONE]\n\n"
                    if api == "chat"
                    else (
                        b'event: message_stop\ndata: {"type": "message_stop"}\n\n'
                        if api == "anthropic"
                        else b""
                    )
                )
                tail = b"%x\r\n%s\r\n" % (len(ending), ending) if ending else b""
                writer.write(tail + b"0\r\n\r\n")
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()


async def _one(client: httpx.AsyncClient, url: str, api: str, n: int) -> tuple[float, list[float]]:
    """One request: a new conversation (the proxy threads and records each)."""
    path, base = APIS[api]
    content = f"go {n}"
    body = dict(base)
    if api == "responses":
        body["input"] = content
    else:
        body["messages"] = [{"role": "user", "content": content}]
    started = time.monotonic()
    first: float | None = None
    latencies: list[float] = []
    pending = b""
    async with client.stream("POST", url + path, json=body) as response:
        async for part in response.aiter_raw():
            now = time.monotonic()
            first = now - started if first is None else first
            pending += part
            *events, pending = pending.split(b"\n\n")
            for event in events:
                payload = event.rsplit(b"data: ", 1)[-1]
                if payload not in (b"[DONE]", b'{"type": "message_stop"}'):
                    latencies.append(now - json.loads(payload)["t"])
    assert first is not None and len(latencies) == CHUNKS, (api, len(latencies))
    return first, latencies


def _p(values: list[float], q: float) -> float:
    return (
        statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]
        if q < 100
        else max(values)
    )


async def _measure(
    requests: int,
) -> tuple[dict[str, dict[str, dict[str, list[float]]]], tuple[float, float]]:
    """The samples per API each way, and the proxy process's CPU seconds per proxied request."""
    out = {api: {way: {"first": [], "chunk": []} for way in ("direct", "proxy")} for api in APIS}
    upstream = _Child("--upstream")
    proxy = _Child("--proxy", upstream.url)
    try:
        urls = {"direct": upstream.url, "proxy": proxy.url}
        async with httpx.AsyncClient(timeout=30) as client:
            for api in APIS:  # warm up: connections, imports, the proxy's first session
                for name in urls:
                    await _one(client, urls[name], api, -1)
            proxy.say("measure")
            for i in range(requests):
                order = ("direct", "proxy") if i % 2 else ("proxy", "direct")
                for api in APIS:
                    for name in order:
                        first, chunks = await _one(client, urls[name], api, i)
                        out[api][name]["first"].append(first)
                        out[api][name]["chunk"].extend(chunks)
    finally:
        user, system, calls = proxy.close().split()
        upstream.close()
    proxied = requests * len(APIS)
    assert int(calls) == proxied, (calls, proxied)
    return out, (float(user) / proxied, float(system) / proxied)


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
        print(cpu, len(proxy.calls) - len(APIS), flush=True)


def proxy_overhead(quick: bool = False) -> dict[str, float]:
    """Print and return the proxy's added time to first event and per event (p50, p99, ms),
    per API."""
    requests = 40 if quick else 200
    data, cpu = asyncio.run(_measure(requests))
    figures: dict[str, float] = {}
    load = os.getloadavg()[0] / (os.cpu_count() or 1)
    print(
        f"\nRecording proxy overhead: {requests} streamed requests per API each way, interleaved, "
        f"{CHUNKS} events {GAP * 1000:.0f} ms apart, local upstream (ms; machine load "
        f"{load:.1f} per core: above 1, wall times include waiting for a CPU)"
    )
    print(
        f"  {'':<36}{'direct p50':>11}{'proxy p50':>11}{'added p50':>11}"
        f"{'direct p99':>11}{'proxy p99':>11}{'added p99':>11}   target"
    )
    for api in APIS:
        for key, label, target in (
            ("first", "time to first event", "<= 2 ms p50"),
            ("chunk", "latency per event", "<= 1 ms p50"),
        ):
            direct, proxied = data[api]["direct"][key], data[api]["proxy"][key]
            d50, p50 = _p(direct, 50), _p(proxied, 50)
            d99, p99 = _p(direct, 99), _p(proxied, 99)
            figures[f"{api}_{key}_p50"], figures[f"{api}_{key}_p99"] = p50 - d50, p99 - d99
            cells = [d50, p50, p50 - d50, d99, p99, p99 - d99]
            row = f"{api}: {label}"
            print(f"  {row:<36}" + "".join(f"{v * 1e3:>11.3f}" for v in cells) + f"   {target}")
    user, system = cpu
    figures["user_cpu_per_request"], figures["system_cpu_per_request"] = user, system
    print(
        f"  the proxy process's CPU per streamed request of {CHUNKS} events: {user * 1e3:.2f} ms"
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
