"""Stores under hostile use: lone surrogates stored exactly, failing stores and files that are not stores as StoreError, imports and traces that cannot be read named."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

import agentnb as an
from agentnb.models import ScriptedModel


class BrokenStore(an.MemoryStore):
    def commit(self, session_id: str, base: int, messages: Sequence[dict[str, Any]]) -> int:
        raise RuntimeError("disk on fire")


def test_a_lone_surrogate_is_stored_exactly_and_never_locks_the_session(tmp_path):
    store = an.SQLiteStore(tmp_path / "s.db")
    session = an.Session(id="t1", store=store)
    agent = an.Agent("x", model=ScriptedModel(["reply \udfff", "ok"]))
    agent.run_sync("hi \ud800", session=session)
    assert store.load("t1").to_openai() == session.to_openai()  # lossless
    assert session.active_run is None and agent.run_sync("again", session=session).output == "ok"
    an.Memory(store, user="bob").remember("fact \ud800")
    assert an.Memory(store, user="bob").items()[0]["text"] == "fact \ud800"
    with pytest.raises(an.ConfigurationError, match="user"):
        an.Memory(store, user="\ud800")


def test_a_failing_store_raises_a_store_error_and_frees_the_session():
    session = an.Session(store=BrokenStore())
    agent = an.Agent("x", model=ScriptedModel(["ok", "ok"]))
    with pytest.raises(an.StoreError, match="disk on fire") as info:
        agent.run_sync("hi", session=session)
    assert isinstance(info.value.__cause__, RuntimeError)
    assert info.value.result.stop_reason == "final_answer"  # the run ended; saving failed
    assert session.active_run is None and session.lock.holder is None


def test_a_file_that_is_not_a_store_is_a_store_error(tmp_path):
    path = tmp_path / "not.db"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(an.StoreError, match="cannot be used as an agentnb store"):
        an.SQLiteStore(path)


def test_importing_a_file_without_a_header_never_drops_a_message(tmp_path):
    plain = tmp_path / "plain.jsonl"
    plain.write_text('{"role":"user","content":"first"}\n{"role":"assistant","content":"second"}\n')
    store = an.MemoryStore()
    with pytest.raises(an.ConfigurationError, match="no header line"):
        store.import_jsonl(plain)
    session = store.import_jsonl(plain, session_id="p")
    assert [m["content"] for m in session.to_openai()] == ["first", "second"]
    broken = tmp_path / "broken.jsonl"
    broken.write_bytes(b"\xff\xfe")
    with pytest.raises(an.ConfigurationError, match="not an exported agentnb session"):
        store.import_jsonl(broken, session_id="q")


def test_a_trace_nested_too_deeply_is_a_trace_format_error(tmp_path):
    path = tmp_path / "deep.jsonl"
    path.write_text('{"type": "$agentnb-trace", "version": 2}\n' + "[" * 100_000 + "]" * 100_000)
    with pytest.raises(an.TraceFormatError, match="line 2"):
        an.Trace.load(path)
