"""Requests as a seam: diffs of two requests, a function model sees requests by reference."""

from __future__ import annotations

import agentnb as an
from agentnb.models import FunctionModel


def test_request_diff_shows_a_dropped_message_as_one_removal():
    base = [{"role": "system", "content": "s"}] + [
        {"role": "user", "content": f"m{i}"} for i in range(6)
    ]
    older = an.models.ModelRequest(base)
    newer = an.models.ModelRequest([base[0], *base[2:], {"role": "user", "content": "new"}])
    diff = older.diff(newer)
    assert diff.removed == [(1, {"role": "user", "content": "m0"})]
    assert diff.added == [(6, {"role": "user", "content": "new"})] and diff.kept == 5


async def test_a_function_model_sees_requests_by_reference():
    seen: list[int] = []

    def reply(request: an.models.ModelRequest) -> str:
        seen.append(len(request.messages))
        return "ok"

    session = an.Session()
    for _ in range(3):
        await an.Agent("s", model=FunctionModel(reply)).run("hi", session=session)
    assert seen == [2, 4, 6] and [r.size for r in session.snapshots] == [2, 4, 6]
