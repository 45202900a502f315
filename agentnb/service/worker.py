"""``python -m agentnb worker``: a process that runs the tasks of a durable Runtime.

    python -m agentnb worker --agent app.agents:make_agent \\
        --backend postgresql://127.0.0.1:5432/dbos --store postgresql://127.0.0.1:5432/app

``--agent`` names a function (``module:factory``) returning the :class:`~agentnb.Agent`; every
worker must run the same agent. ``--store`` is where the sessions live (a Postgres url, or a
SQLite path for one machine); ``--backend`` is DBOS's own database. Start as many workers as
you like, anywhere they reach both databases: each gets a unique id, and they take tasks from
one queue. A worker killed at any moment loses nothing: the others notice within ``--lease``
seconds (at once on the same machine) and take its unfinished tasks over, from their last
committed tool round. ``--executor-id`` gives a worker a fixed id instead (a restart with it
takes back what no survivor took first; a live worker's id is refused).

A worker also runs the jobs its tasks name (see :mod:`.jobs`), served by the
:class:`Extension` s the command is given: ``python -m agentnb worker`` adds the
evaluation's (``agentnb.evals.sweep``), so a worker started with ``--variants module:attr``
and ``--tasks module:attr`` runs the runs of sweeps (``an.evaluate(variants, tasks,
runtime=rt)`` on a Runtime with this backend).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import re
import signal
import sys
import traceback
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import AgentnbError, ConfigurationError
from ..models import Secrets
from ..storage import describe

if TYPE_CHECKING:
    from .runtime import Runtime

__all__ = ["Extension", "load_factory", "main", "parser", "serve"]


class Extension(Protocol):
    """What adds jobs to the worker command: arguments of its own, and the jobs it serves on
    the worker's runtime for the arguments given (``rt.serve(name, job)``)."""

    def arguments(self, parser: argparse.ArgumentParser) -> None: ...
    def serve(self, rt: Runtime, args: argparse.Namespace) -> None: ...


def load_factory(spec: str, what: str = "--agent") -> Any:
    """The agent made by ``module:factory`` (the factory is called with no arguments). A
    spec that cannot be loaded, or a factory that raises, is a ConfigurationError in one
    line, as ``eval`` and ``optimize`` say it."""
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise ConfigurationError(f"{what} must look like module:factory, got {spec!r}")
    if "" not in sys.path and "." not in sys.path:
        sys.path.insert(0, "")  # the project the worker is started in
    try:
        factory: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            factory = getattr(factory, part)
    except (ImportError, AttributeError) as exc:
        raise ConfigurationError(f"{what} {spec!r} cannot be loaded: {exc}") from None
    if not callable(factory):
        return factory
    try:
        return factory()
    except Exception as exc:
        raise ConfigurationError(f"{what} {spec!r} raised {type(exc).__name__}: {exc}") from None


def _store(spec: str) -> Any:
    """A Postgres url or keyword string (``host=... dbname=...``), else a SQLite path."""
    if spec.startswith(("postgresql://", "postgres://")) or re.match(r"\s*\w+\s*=", spec):
        from ..storage import PostgresStore

        return PostgresStore(spec)
    from ..storage import SQLiteStore

    return SQLiteStore(spec.removeprefix("sqlite:///"))


async def serve(args: argparse.Namespace, extensions: Sequence[Extension] = ()) -> int:
    from .durable import DBOS
    from .runtime import Runtime

    agent = load_factory(args.agent)
    backend = DBOS(
        args.backend,
        workers=True,
        executor_id=args.executor_id,
        polling=args.polling,
        heartbeat=args.heartbeat,
        lease=args.lease,
        exit_when_lost=True,
    )
    rt = Runtime(
        agent,
        max_lost=args.max_lost,
        store=_store(args.store),
        max_concurrency=args.concurrency,
        retry=args.attempts,
        backend=backend,
    )
    for extension in extensions:
        extension.serve(rt, args)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await backend.start()
    print(f"agentnb worker {backend.executor_id} ready: {agent!r}", flush=True)
    await stop.wait()
    await rt.close()
    return 0


def parser(extensions: Sequence[Extension] = ()) -> argparse.ArgumentParser:
    w = argparse.ArgumentParser(prog="python -m agentnb worker", description=__doc__.split("\n")[0])
    w.add_argument("--agent", required=True, help="module:factory returning the Agent")
    w.add_argument(
        "--backend", required=True, help="DBOS's database: postgresql://… or sqlite:///path"
    )
    w.add_argument("--store", required=True, help="the sessions: postgresql://… or a SQLite path")
    w.add_argument("--concurrency", type=int, default=8, help="tasks run at once here")
    w.add_argument("--attempts", type=int, default=3, help="attempts per task (retries + 1)")
    w.add_argument(
        "--executor-id", default=None, help="a fixed id for this worker (default: a unique one)"
    )
    w.add_argument("--polling", type=float, default=0.1, help="seconds between queue polls")
    w.add_argument("--heartbeat", type=float, default=1.0, help="seconds between beats")
    w.add_argument(
        "--max-lost", type=int, default=5, help="a task whose workers die under it this often ends"
    )
    w.add_argument(
        "--lease", type=float, default=5.0, help="seconds without a beat before a takeover"
    )
    for extension in extensions:
        extension.arguments(w)
    return w


def main(argv: list[str], extensions: Sequence[Extension] = ()) -> int:
    """Run a worker until SIGTERM or SIGINT. Exit status: 0 when stopped, 2 on a usage or
    configuration error (one line), 3 when it crashed (the traceback, masked)."""
    args = parser(extensions).parse_args(argv)
    secrets = Secrets()
    for url in (args.backend, args.store):  # whatever fails, their passwords never show
        secrets.add(*describe(url)[1].values)
    try:
        return asyncio.run(serve(args, extensions))
    except AgentnbError as exc:  # ours: one line says what is wrong
        print(secrets.mask(f"agentnb worker: {exc}"), file=sys.stderr)
        return 2
    except Exception as exc:  # the engine's or a driver's: the traceback, masked
        print(secrets.mask("".join(traceback.format_exception(exc))), file=sys.stderr)
        print(
            secrets.mask(f"agentnb worker: crashed: {type(exc).__name__}: {exc}"), file=sys.stderr
        )
        return 3
