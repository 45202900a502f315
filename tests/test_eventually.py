"""tests.helpers.eventually: a test waits for a side effect, not for a guessed time."""

from __future__ import annotations

import asyncio
import threading

import pytest

from tests.helpers import eventually, eventually_sync


async def test_eventually_returns_the_value_once_it_holds_and_lets_the_loop_run():
    box: list[int] = []
    asyncio.get_running_loop().call_later(0.02, box.append, 7)
    assert await eventually(lambda: box) == [7]
    assert await eventually(lambda: "at once") == "at once"  # no wait when it already holds


async def test_eventually_names_what_never_held():
    with pytest.raises(AssertionError, match=r"the flag did not hold within 0\.05 s"):
        await eventually(lambda: False, 0.05, what="the flag")


def test_eventually_sync_waits_for_another_thread():
    done = threading.Event()
    threading.Timer(0.02, done.set).start()
    assert eventually_sync(done.is_set) is True
    with pytest.raises(AssertionError, match=r"did not hold within 0\.02 s"):
        eventually_sync(lambda: None, 0.02)
