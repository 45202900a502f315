"""PostgresStore: sessions and long-term memory in Postgres, where every worker reaches them.

The same contract as :class:`~agentnb.SQLiteStore`, with the same statements
(:class:`~agentnb.storage.sql.SQLStore`): a version per session that every write increments,
optimistic writers (a writer that built on an older version gets
:class:`~agentnb.errors.SessionConflict` naming both versions), each write one transaction
that lands whole or not at all. The version check holds the session's row lock
(``SELECT ... FOR UPDATE``) until the commit, so two workers never interleave.

The connection string may be a URL (``postgresql://user:pw@host:port/db?...``) or keywords
(``host=... password=...``); its password, in either form, is never shown: not in errors, not
in ``repr``, not in a worker's traceback (:func:`describe`). After a server restart the next
call connects again (see :mod:`agentnb.storage.sql`).

Why psycopg 3: the maintained Postgres driver, sync and async, with binary wheels
(the ``service`` extra installs it).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

from .._secrets import MASK, Secrets, is_secret_name
from ..errors import ConfigurationError
from .database import SQLDatabase, Statements
from .sql import SQLStore

__all__ = ["PostgresStore", "describe"]

#: Connection parameters that hold a credential.
_SECRET_KEYS = ("password", "sslpassword", "passfile", "sslkey")


def describe(conninfo: str) -> tuple[str, Secrets]:
    """``conninfo`` safe to show, and its credentials (to mask in any text)."""
    secrets = Secrets()
    if "://" in conninfo:  # the password in the userinfo, and query parameters named so
        parts = urlsplit(conninfo)
        user, colon, password = parts.netloc.rpartition("@")[0].partition(":")
        pairs = parse_qsl(parts.query, keep_blank_values=True)
        secrets.add(password, unquote(password), *(v for k, v in pairs if is_secret_name(k)))
    try:
        from psycopg.conninfo import conninfo_to_dict

        params = conninfo_to_dict(conninfo)
    except Exception:  # unreadable: show nothing of it but its kind
        return "a Postgres database (its connection string cannot be read)", secrets
    secrets.add(*(str(params[k]) for k in _SECRET_KEYS if params.get(k)))
    if "://" not in conninfo:
        shown = " ".join(f"{k}={v}" for k, v in params.items() if k not in _SECRET_KEYS)
        return secrets.mask(shown), secrets
    host = parts.netloc.rpartition("@")[2]
    netloc = f"{user}{':' + MASK if colon else ''}@{host}" if "@" in parts.netloc else host
    query = urlencode([(k, MASK if is_secret_name(k) else v) for k, v in pairs], safe="*")
    return secrets.mask(urlunsplit(parts._replace(netloc=netloc, query=query))), secrets


class PostgresStore(SQLStore):
    """Sessions in the Postgres database at ``url`` (``postgresql://user@host:port/db``, or
    keywords: ``host=... dbname=...``).

    Tables are created if missing (``agentnb_sessions``, ``agentnb_messages``,
    ``agentnb_memories``). Safe to share between processes and machines.
    """

    name = "postgres"
    prefix = "agentnb_"

    def __init__(self, url: str, *, connect_timeout: float = 10.0) -> None:
        try:
            import psycopg
        except ImportError:
            raise ConfigurationError(
                "PostgresStore needs psycopg 3: pip install 'agentnb[service]'"
            ) from None
        if not isinstance(url, str) or not url.strip():
            raise ConfigurationError("PostgresStore needs a connection string (a url)")
        self._psycopg = psycopg
        self._url = url
        self.connect_timeout = connect_timeout
        self.shown, self.secrets = describe(url)
        self.db = self.database()

        def create(run: Statements) -> None:  # IF NOT EXISTS races between processes
            run("SELECT pg_advisory_xact_lock(7242000)")
            for statement in self.schema():
                run(statement)

        self.db.write("set up its tables", create)

    @property
    def url(self) -> str:
        """The connection string as given (it may hold the password: never print it)."""
        return self._url

    def database(self) -> SQLDatabase:
        """A connection of its own to this database (the service's task log has one)."""
        psycopg = self._psycopg

        def connect() -> Any:
            return psycopg.connect(
                self._url, autocommit=True, connect_timeout=int(self.connect_timeout)
            )

        return SQLDatabase(
            connect,
            "postgres",
            f"the Postgres store {self.shown}",
            secrets=self.secrets,
            errors=(psycopg.Error,),
            lost=(psycopg.OperationalError,),
        )

    def __repr__(self) -> str:
        return f"<PostgresStore {self.shown!r}>"
