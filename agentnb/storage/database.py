"""One connection to a SQL database, shared by threads, every failure typed.

:class:`SQLDatabase` is one connection (``sqlite3`` or psycopg 3), used from the event loop and
worker threads under one lock: ``run`` one statement, ``write`` one transaction (SQLite's
``BEGIN IMMEDIATE``; a Postgres transaction whose row locks last to its commit). Every driver
failure becomes a :class:`~agentnb.errors.StoreError` naming the database - never its
password, in whatever form it was given - with the driver's error as its cause when no
credential could be in it. A Postgres connection lost (a server restart) is opened again and
the statement or transaction tried once more - unless the connection went while a
transaction committed: then nobody knows whether it landed, and the error says so. Postgres
text cannot hold NUL: an id with one is refused before it is sent.

The stores (:mod:`agentnb.storage.sql`) and the service's task log
(:mod:`agentnb.service.journal`) run on it.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Literal, TypeVar

from .. import _json
from .._secrets import Secrets
from ..errors import AgentnbError, StoreError

__all__ = ["SQLDatabase", "Statements", "dump", "load"]

T = TypeVar("T")
Dialect = Literal["sqlite", "postgres"]


def load(body: str) -> dict[str, Any]:
    value = json.loads(body)
    if not isinstance(value, dict):
        raise ValueError(f"a stored row is {type(value).__name__}, not an object")
    return value


def dump(message: dict[str, Any]) -> str:
    return _json.dumps(message, separators=(",", ":"))  # lone surrogates kept exactly


class Statements:
    """Runs statements of one transaction (or of none), ``?`` placeholders translated."""

    def __init__(self, db: Any, dialect: Dialect) -> None:
        self.db = db
        self.dialect = dialect
        self.sent = 0
        self.committing = False

    def __call__(self, sql: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        self.sent += 1
        if self.dialect == "postgres":
            sql = sql.replace("?", "%s")
        cursor = self.db.execute(sql, tuple(args))
        return list(cursor.fetchall()) if cursor.description else []

    def many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        self.sent += 1
        if self.dialect == "postgres":
            with self.db.cursor() as cursor:
                cursor.executemany(sql.replace("?", "%s"), rows)
        else:
            self.db.executemany(sql, rows)


class SQLDatabase:
    """One connection to a SQL database, shared by threads, failures typed (see module).

    Args:
        connect: opens the connection (autocommit: transactions are opened explicitly).
        dialect: ``"sqlite"`` or ``"postgres"``.
        name: how errors name the database (no password: see :func:`describe`).
        secrets: credentials to mask in any text an error carries.
        errors: the driver's error classes (anything else is not the database's doing).
        lost: the driver's error classes of a lost connection (reopened, see module).
    """

    def __init__(
        self,
        connect: Callable[[], Any],
        dialect: Dialect,
        name: str,
        *,
        secrets: Secrets | None = None,
        errors: tuple[type[BaseException], ...] = (),
        lost: tuple[type[BaseException], ...] = (),
    ) -> None:
        self.connect = connect
        self.dialect = dialect
        self.name = name
        self.secrets = secrets or Secrets()
        self.errors: tuple[type[BaseException], ...] = (*errors, ValueError, TypeError, OSError)
        self.lost: tuple[type[BaseException], ...] = lost
        self.lock = threading.Lock()
        #: The database's clock in SQL (Unix seconds): one clock for every machine.
        self.now = (
            "EXTRACT(EPOCH FROM clock_timestamp())"
            if dialect == "postgres"
            else "((julianday('now') - 2440587.5) * 86400.0)"
        )
        self.db: Any = None
        with self.guard("be opened"):
            self.db = connect()

    def fail(self, what: str, exc: BaseException, note: str = "") -> StoreError:
        return StoreError(self.secrets.mask(f"{self.name} could not {what}: {exc}{note}"))

    @contextlib.contextmanager
    def guard(self, what: str) -> Iterator[None]:
        """Driver and JSON failures as :class:`StoreError` (typed failures stay as they are).
        With credentials the driver's error is not chained: its text may carry them."""
        try:
            yield
        except AgentnbError:
            raise
        except self.errors as exc:
            raise self.fail(what, exc) from (None if self.secrets else exc)

    def _reopen(self) -> None:
        with contextlib.suppress(Exception):
            self.db.close()
        self.db = self.connect()

    def _check(self, what: str, args: Sequence[Any]) -> None:
        if self.dialect == "postgres" and any(isinstance(a, str) and "\x00" in a for a in args):
            raise StoreError(
                f"{self.name} could not {what}: Postgres text cannot hold the NUL character "
                "(U+0000), and a value given has one"
            )

    def run(self, what: str, sql: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """One statement in autocommit mode; its rows."""
        self._check(what, args)
        with self.lock, self.guard(what):
            try:
                return Statements(self.db, self.dialect)(sql, args)
            except self.lost:
                self._reopen()  # one statement, sent again whole
                return Statements(self.db, self.dialect)(sql, args)

    def write(self, what: str, work: Callable[[Statements], T], *args: Any) -> T:
        """``work(statements)`` in one transaction: all of it lands, or none of it."""
        self._check(what, args)
        with self.lock, self.guard(what):
            for attempt in (1, 2):
                statements = Statements(self.db, self.dialect)
                try:
                    with self._transaction(statements):
                        result = work(statements)
                        statements.committing = True
                    return result
                except self.lost as exc:
                    if attempt == 2 or statements.committing:
                        note = "; the connection was lost while committing: it may have landed"
                        with contextlib.suppress(Exception):
                            self._reopen()
                        raise self.fail(what, exc, note) from None
                    self._reopen()  # lost before the commit: nothing landed, do it again
        raise AssertionError("unreachable")  # pragma: no cover

    @contextlib.contextmanager
    def _transaction(self, statements: Statements) -> Iterator[None]:
        if self.dialect == "postgres":
            with self.db.transaction():
                yield
            return
        statements("BEGIN IMMEDIATE")  # the writer holds the file's lock from here
        try:
            yield
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    def close(self) -> None:
        with self.lock, contextlib.suppress(Exception):
            self.db.close()

    def __del__(self) -> None:  # dropped without close(): close the connection quietly
        db = getattr(self, "db", None)
        if db is not None:
            with contextlib.suppress(Exception):
                db.close()
