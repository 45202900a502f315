"""An App's command, run once: its input written, its output read with a bound, its end.

A command (``App(command=[...])``) gets the task's text on its standard input and answers on
its standard output. Its output is read as it comes and only the last :data:`OUTPUT_LIMIT`
bytes are kept (the last :data:`ERROR_LIMIT` of its standard error, for the error message):
a command that prints without end costs the evaluating process that much, never more. The
run ends when the command exits: its pipes then get :data:`GRACE` seconds to drain, and
whatever is left of its process group (a background child still holding its output) is
ended. A run that times out or is cancelled ends the whole group too.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections import deque
from collections.abc import Mapping, Sequence

__all__ = ["ERROR_LIMIT", "GRACE", "OUTPUT_LIMIT", "Tail", "run_command"]

#: The bytes of a command's standard output kept: the last MiB (its answer is at the end).
OUTPUT_LIMIT = 1 << 20
#: The bytes of its standard error kept for the error message.
ERROR_LIMIT = 64 * 1024
#: Seconds a command's pipes may stay open after it exited (a child may still hold them).
GRACE = 1.0


class Tail:
    """The last ``limit`` bytes of a stream, kept in the pieces they came in."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.size = 0
        self.seen = 0
        self._parts: deque[bytes] = deque()

    def add(self, part: bytes) -> None:
        self.seen += len(part)
        self._parts.append(part[-self.limit :])
        self.size += len(self._parts[-1])
        while self.size - len(self._parts[0]) >= self.limit:
            self.size -= len(self._parts.popleft())

    def text(self) -> str:
        data = b"".join(self._parts)[-self.limit :]
        return data.decode("utf-8", "replace")


async def _drain(stream: asyncio.StreamReader | None, tail: Tail) -> None:
    if stream is None:
        return
    while part := await stream.read(1 << 16):
        tail.add(part)


async def _write(stream: asyncio.StreamWriter | None, text: str) -> None:
    if stream is None:
        return
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        stream.write(text.encode())
        await stream.drain()
        stream.close()


async def _exit(process: asyncio.subprocess.Process) -> int:
    """The command's exit status, as soon as it exits. (``Process.wait()`` of Python 3.11
    also waits for its pipes to close, which a child holding them never does.)"""
    waited = asyncio.ensure_future(process.wait())
    try:
        while process.returncode is None and not waited.done():
            await asyncio.wait([waited], timeout=0.05)
    finally:
        waited.cancel()
    code = process.returncode
    assert code is not None
    return code


def _end_group(process: asyncio.subprocess.Process) -> None:
    """End the command's process group: the command if it still runs, and its children."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


async def run_command(
    command: Sequence[str], text: str, env: Mapping[str, str]
) -> tuple[int, str, str]:
    """Run ``command`` with ``text`` on its input: its exit status, the tail of its output
    and of its errors (see the module docstring)."""
    process = await asyncio.create_subprocess_exec(
        *command,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=dict(env),
        start_new_session=True,  # its own process group: ended with it, children included
    )
    out, err = Tail(OUTPUT_LIMIT), Tail(ERROR_LIMIT)
    readers = [
        asyncio.ensure_future(_drain(process.stdout, out)),
        asyncio.ensure_future(_drain(process.stderr, err)),
    ]
    writer = asyncio.ensure_future(_write(process.stdin, text))
    try:
        code = await _exit(process)
        await asyncio.wait(readers, timeout=GRACE)  # what it printed last, if a child holds on
    finally:
        _end_group(process)
        for task in (*readers, writer):
            task.cancel()
        await asyncio.gather(*readers, writer, return_exceptions=True)
        if process.returncode is None:  # cancelled while it ran: ended with its group
            await process.wait()
    return code, out.text(), err.text()
