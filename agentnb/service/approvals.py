"""Approvals, durable: a task's calls that wait for a person's yes, kept in the task log.

A run asks before an approval-gated call (:mod:`agentnb.runtime.guard`); the service answers
from here. A request is recorded the first time a call asks (keyed by the call's idempotency
key, so the same call asks once however often its task is resumed) with the digest of its
tool and arguments and the time it lapses. ``rt.approve(task_id, call_id, digest=...)`` and
``rt.deny(...)`` decide it - refused (:class:`~agentnb.errors.ApprovalError`) when no such
call waits, when the digest is not the one of its arguments, when it lapsed, or when it was
decided already (an approve and a deny of one call made at once: one wins, by a
compare-and-set on the row, and the other is told which decision came first) - and wake the
task. An approval is used at most once (:meth:`use`: one
conditional update), so a task resumed twice never runs the call twice; a request nobody
answered in time is denied as expired. In a :class:`MemoryStore`'s log it lives in a dict;
with SQLite or Postgres in ``agentnb_approvals``, on the database's clock, and survives
restarts.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import ApprovalError

if TYPE_CHECKING:
    from ..runtime import ApprovalRequest, Verdict
    from ..storage import SQLDatabase, Statements

__all__ = ["MemoryApprovals", "Pending", "SQLApprovals"]


@dataclass(frozen=True, slots=True)
class Pending:
    """A call that waits for a person: what the views show beside Approve and Deny."""

    task_id: str
    session_id: str
    call_id: str
    tool: str
    arguments: str
    digest: str
    key: str
    expires: float | None

    def row(self) -> dict[str, Any]:
        return {f: getattr(self, f) for f in self.__slots__}


def _expired(timeout: float | None) -> str:
    return f"the approval request expired: nobody answered within {timeout or 0:g} s"


def _decided(task_id: str, call_id: str, decision: tuple[str, str] | None) -> ApprovalError:
    """The refusal of a decision on a call that waits for none: which decision came first."""
    if decision is None:
        return ApprovalError(
            f"no call {call_id!r} of task {task_id} awaits approval (never asked, or decided)"
        )
    verdict, reason = decision
    why = f" ({reason})" if reason else ""
    return ApprovalError(
        f"call {call_id!r} of task {task_id} no longer awaits approval: it was already "
        f"{verdict}{why}; this decision was not taken"
    )


def _check(pending: Pending | None, task_id: str, call_id: str, digest: str | None) -> Pending:
    if pending is None:
        raise _decided(task_id, call_id, None)
    if digest is not None and digest != pending.digest:
        raise ApprovalError(
            f"call {call_id} of task {task_id} has other arguments than the ones you were "
            f"shown (digest {digest[:12]}… given, {pending.digest[:12]}… asked): look again"
        )
    return pending


class MemoryApprovals:
    """Requests in a dict (the log of a runtime whose store is in memory)."""

    def __init__(self) -> None:
        self.rows: dict[str, dict[str, Any]] = {}

    def ask(
        self, task_id: str, session_id: str, request: ApprovalRequest, timeout: float | None
    ) -> tuple[Verdict, str, float | None]:
        now = time.time()
        row = self.rows.setdefault(
            request.key,
            {
                "pending": Pending(
                    task_id,
                    session_id,
                    request.call_id,
                    request.name,
                    request.arguments,
                    request.digest,
                    request.key,
                    None if timeout is None else now + timeout,
                ),
                "verdict": None,
                "reason": "",
                "used": False,
                "timeout": timeout,
            },
        )
        expires = row["pending"].expires
        if row["verdict"] is None and expires is not None and now > expires:
            return "denied", _expired(row["timeout"]), expires
        return row["verdict"] or "pending", row["reason"], expires

    def decide(
        self, task_id: str, call_id: str, digest: str | None, verdict: Verdict, reason: str
    ) -> Pending:
        mine = [
            r
            for r in self.rows.values()
            if r["pending"].task_id == task_id and r["pending"].call_id == call_id
        ]
        found = [r for r in mine if r["verdict"] is None]
        if not found and mine:  # decided already: say which way
            raise _decided(task_id, call_id, (mine[-1]["verdict"], mine[-1]["reason"]))
        pending = _check(found[-1]["pending"] if found else None, task_id, call_id, digest)
        if pending.expires is not None and time.time() > pending.expires:
            raise ApprovalError(f"the approval request of call {call_id} has expired")
        found[-1].update(verdict=verdict, reason=reason)
        return pending

    def forget(self, task_id: str) -> None:
        for key in [k for k, r in self.rows.items() if r["pending"].task_id == task_id]:
            del self.rows[key]

    def use(self, key: str) -> bool:
        row = self.rows.get(key)
        if row is None or row["used"]:
            return False
        row["used"] = True
        return True

    def pending(self, task_id: str | None = None) -> list[Pending]:
        return [
            r["pending"]
            for r in self.rows.values()
            if r["verdict"] is None and task_id in (None, r["pending"].task_id)
        ]


class SQLApprovals:
    """Requests in ``agentnb_approvals`` beside a SQL store's sessions."""

    def __init__(self, db: SQLDatabase) -> None:
        self.db = db

        def create(run: Statements) -> None:
            if db.dialect == "postgres":  # CREATE ... IF NOT EXISTS races between processes
                run("SELECT pg_advisory_xact_lock(7242003)")
            run(
                "CREATE TABLE IF NOT EXISTS agentnb_approvals (call_key TEXT PRIMARY KEY, "
                "task_id TEXT NOT NULL, session_id TEXT NOT NULL, call_id TEXT NOT NULL, "
                "tool TEXT NOT NULL, arguments TEXT NOT NULL, digest TEXT NOT NULL, "
                "requested DOUBLE PRECISION NOT NULL, timeout DOUBLE PRECISION, "
                "verdict TEXT, reason TEXT, decided DOUBLE PRECISION, used DOUBLE PRECISION)"
            )

        db.write("set up the approvals of", create)

    _FIELDS = "task_id, session_id, call_id, tool, arguments, digest, call_key, requested + timeout"

    def ask(
        self, task_id: str, session_id: str, request: ApprovalRequest, timeout: float | None
    ) -> tuple[Verdict, str, float | None]:
        now = self.db.now
        rows = self.db.run(
            f"ask for the approval of call {request.call_id} in",
            "INSERT INTO agentnb_approvals (call_key, task_id, session_id, call_id, tool, "
            f"arguments, digest, requested, timeout) VALUES (?, ?, ?, ?, ?, ?, ?, {now}, ?) "
            "ON CONFLICT (call_key) DO UPDATE SET call_key = excluded.call_key "
            f"RETURNING verdict, reason, requested + timeout, {now}, timeout",
            (
                request.key,
                task_id,
                session_id,
                request.call_id,
                request.name,
                request.arguments,
                request.digest,
                timeout,
            ),
        )
        verdict, reason, expires, clock, kept = rows[0]
        if verdict is None and expires is not None and clock > expires:
            return "denied", _expired(kept), expires
        return verdict or "pending", reason or "", expires

    def decide(
        self, task_id: str, call_id: str, digest: str | None, verdict: Verdict, reason: str
    ) -> Pending:
        def decided(run: Statements) -> ApprovalError:
            rows = run(
                "SELECT verdict, reason FROM agentnb_approvals WHERE task_id = ? AND call_id = ? "
                "AND verdict IS NOT NULL ORDER BY decided DESC",
                (task_id, call_id),
            )
            return _decided(task_id, call_id, (rows[0][0], rows[0][1] or "") if rows else None)

        def work(run: Statements) -> Pending:
            rows = run(
                f"SELECT {self._FIELDS}, {self.db.now} FROM agentnb_approvals WHERE task_id = ? "
                "AND call_id = ? AND verdict IS NULL ORDER BY requested DESC",
                (task_id, call_id),
            )
            if not rows:
                raise decided(run)
            pending = _check(Pending(*rows[0][:-1]), task_id, call_id, digest)
            if pending.expires is not None and rows[0][-1] > pending.expires:
                raise ApprovalError(f"the approval request of call {call_id} has expired")
            changed = run(  # compare-and-set: only if nobody decided it meanwhile
                f"UPDATE agentnb_approvals SET verdict = ?, reason = ?, decided = {self.db.now} "
                "WHERE call_key = ? AND verdict IS NULL RETURNING call_key",
                (verdict, reason, pending.key),
            )
            if not changed:  # another decision won the row: say which
                raise decided(run)
            return pending

        return self.db.write(f"decide call {call_id} of task {task_id} in", work, task_id)

    def use(self, key: str) -> bool:
        rows = self.db.run(
            "use an approval in",
            f"UPDATE agentnb_approvals SET used = {self.db.now} WHERE call_key = ? "
            "AND used IS NULL RETURNING call_key",
            (key,),
        )
        return bool(rows)

    def pending(self, task_id: str | None = None) -> list[Pending]:
        where, args = ("AND task_id = ?", (task_id,)) if task_id is not None else ("", ())
        rows = self.db.run(
            "read the calls awaiting approval in",
            f"SELECT {self._FIELDS} FROM agentnb_approvals WHERE verdict IS NULL {where} "
            "ORDER BY requested",
            args,
        )
        return [Pending(*row) for row in rows]
