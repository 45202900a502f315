"""Hostile round 3, class 6: typed, versioned, lossless formats (SQLite, JSONL exports,
cassettes, the one lone-surrogate rule)."""

from __future__ import annotations

import hashlib
import json
import sqlite3

import pytest

import agentnb as an
from agentnb.errors import ConfigurationError, StoreError
from agentnb.models.replay import Cassette, request_key

ODD = "line\u2028sep\u2029para\u0085next, lone \udcff surrogate"


def digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_sqlite_untyped_a_corrupt_row_and_a_broken_file_are_store_errors(tmp_path):
    store = an.SQLiteStore(tmp_path / "s.db")
    an.Session([{"role": "user", "content": "hi"}], id="a", store=store).commit()
    store.db.run("break it", "UPDATE messages SET body = '{not json'")
    with pytest.raises(StoreError, match="could not read session 'a'") as info:
        store.load("a")
    assert isinstance(info.value.__cause__, ValueError)
    store.close()
    (tmp_path / "junk.db").write_bytes(b"SQLite format 3\x00" + b"\xff" * 5000)
    with pytest.raises(StoreError):
        an.SQLiteStore(tmp_path / "junk.db")


def test_sqlite_unversioned_a_foreign_file_is_refused_and_left_unchanged(tmp_path):
    path = tmp_path / "theirs.db"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
    db.commit()
    db.close()
    before = digest(path)
    with pytest.raises(StoreError, match="not an agentnb store"):
        an.SQLiteStore(path)
    assert digest(path) == before


def test_sqlite_unversioned_a_newer_file_is_refused_by_its_schema_version(tmp_path):
    path = tmp_path / "new.db"
    an.SQLiteStore(path).close()
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone() == (1,)
    db.execute("PRAGMA user_version = 7")
    db.commit()
    db.close()
    with pytest.raises(StoreError, match="newer agentnb"):
        an.SQLiteStore(path)


def test_sqlite_read_only_a_valid_store_opens_read_only_and_refuses_writes(tmp_path):
    path = tmp_path / "ro.db"
    store = an.SQLiteStore(path)
    an.Session([{"role": "user", "content": "hi"}], id="a", store=store).commit()
    store.close()
    ro = an.SQLiteStore(path, read_only=True)
    session = ro.load("a")
    assert session.messages[0].text == "hi" and ro.list() == ["a"]
    with pytest.raises(StoreError, match="read-only"):  # the edit commits: refused, typed
        session.append({"role": "assistant", "content": "more"})
    with pytest.raises(StoreError, match="read-only"):
        ro.commit("a", ro.version("a"), [{"role": "user", "content": "x"}])


def test_export_truncates_a_failed_export_leaves_the_target_and_odd_text_round_trips(tmp_path):
    store = an.MemoryStore()
    an.Session([{"role": "user", "content": ODD}], id="odd", store=store).commit()
    target = tmp_path / "odd.jsonl"
    target.write_text("precious\n")
    with pytest.raises(an.SessionNotFound):
        store.export_jsonl("missing", target)
    assert target.read_text() == "precious\n"
    store.export_jsonl("odd", target)
    text = target.read_text(encoding="utf-8")
    assert len(text.splitlines()) == 2  # U+2028 and friends are escapes: no torn line
    back = an.MemoryStore().import_jsonl(target)
    assert back.messages[0].text == ODD


def test_cassette_line_separators_load_back_and_tampered_lines_are_typed(tmp_path):
    path = tmp_path / "c.jsonl"
    cassette = Cassette(path)
    request = {"method": "POST", "path": "/v1/chat/completions", "query": [],
               "body": {"messages": [{"role": "user", "content": ODD}], "temperature": 1}}  # fmt: skip
    entry = {"key": request_key(request), "request": request,
             "response": {"status": 200, "headers": {}, "body": ODD}}  # fmt: skip
    cassette.append(entry)
    assert len(path.read_text(encoding="utf-8").splitlines()) == 1
    assert Cassette(path).entries[0]["response"]["body"] == ODD
    for bad in ['{"key": 1}', "[1, 2]", '{"key": "k", "request": {}, "response": {}}']:
        path.write_text(bad + "\n")
        with pytest.raises(ConfigurationError, match=":1: not a recorded exchange"):
            Cassette(path)


def test_cassette_miss_1_versus_1_0_names_the_real_difference(tmp_path):
    path = tmp_path / "c.jsonl"
    cassette = Cassette(path)
    body = {"messages": [{"role": "user", "content": "hi"}], "temperature": 1}
    request = {"method": "POST", "path": "/v1/chat/completions", "query": [], "body": body}
    cassette.append({"key": request_key(request), "request": request,
                     "response": {"status": 200, "headers": {}, "body": "{}"}})  # fmt: skip
    now = {**request, "body": {**body, "temperature": 1.0}}
    assert "temperature: recorded 1, now 1.0" in Cassette(path).difference(now)


async def test_lone_surrogate_every_display_path_is_utf8_and_every_store_exact(tmp_path):
    from agentnb.models import ScriptedModel
    from agentnb.widgets import inspectors

    store = an.SQLiteStore(tmp_path / "s.db")
    session = an.Session([{"role": "user", "content": "bad \ud800 here"}], id="s", store=store)
    agent = an.Agent("sys \udcff", [], model=ScriptedModel(["ok \ud83d", "again \udfff"]))
    result = await agent.run("more \udfff", session=session)
    await agent.run("more", session=session)
    shown = {
        "session": session._repr_mimebundle_(),
        "message": session.messages[0]._repr_mimebundle_(),
        "result": result._repr_mimebundle_(),
        "trace": result.trace._repr_mimebundle_(),
        "request inspector": inspectors.request_payload(session, 1),
        "diff inspector": inspectors.diff_payload(session, 1, 2),
    }
    for name, value in shown.items():  # what a kernel sends must be UTF-8
        text = json.dumps(value, ensure_ascii=False)
        text.encode("utf-8")  # raised UnicodeEncodeError before
        assert "\ufffd" in text or "\\\\ud" in text, name  # shown as U+FFFD, or a repr
    assert store.load("s").to_openai() == session.to_openai()  # stored: exact
    result.trace.save(tmp_path / "t.jsonl")
    again = an.Trace.load(tmp_path / "t.jsonl")
    assert [e.type for e in again] == [e.type for e in result.trace]
