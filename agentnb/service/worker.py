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

A worker also runs the runs of sweeps (``an.evaluate(variants, tasks, runtime=rt)`` on a
Runtime with this backend): start it with ``--variants module:attr`` (a dict of names to
agents, or a function returning one) and ``--tasks module:attr`` (a TaskSet or a list of
tasks), the same the sweep names.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import re
import signal
import sys
import traceback
from typing import Any

from ..errors import AgentnbError, ConfigurationError
from ..models import Secrets
from ..storage import describe

__all__ = ["load_factory", "main", "parser", "serve"]


def load_factory(spec: str) -> Any:
    """The agent made by ``module:factory`` (the factory is called with no arguments)."""
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise ConfigurationError(f"--agent must look like module:factory, got {spec!r}")
    factory = getattr(importlib.import_module(module_name), attr)
    return factory() if callable(factory) else factory


def _store(spec: str) -> Any:
    """A Postgres url or keyword string (``host=... dbname=...``), else a SQLite path."""
    if spec.startswith(("postgresql://", "postgres://")) or re.match(r"\s*\w+\s*=", spec):
        from ..storage import PostgresStore

        return PostgresStore(spec)
    from ..storage import SQLiteStore

    return SQLiteStore(spec.removeprefix("sqlite:///"))


async def serve(args: argparse.Namespace) -> int:
    from .durable import DBOS
    from .runtime import Runtime

    agent = load_factory(args.agent)
    variants = load_factory(args.variants) if args.variants else {}
    tasks = load_factory(args.tasks) if args.tasks else ()
    if bool(variants) != bool(tasks):
        raise ConfigurationError("--variants and --tasks go together (a sweep's runs need both)")
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
    if variants:
        from ..evals.tasks import TaskSet

        backend.sweep_variants.update(variants)
        backend.sweep_tasks = tasks if isinstance(tasks, TaskSet) else TaskSet(list(tasks))
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await backend.start()
    print(f"agentnb worker {backend.executor_id} ready: {agent!r}", flush=True)
    await stop.wait()
    await rt.close()
    return 0


def parser() -> argparse.ArgumentParser:
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
    w.add_argument("--variants", default=None, help="module:attr, a sweep's variants (a dict)")
    w.add_argument("--tasks", default=None, help="module:attr, a sweep's tasks (a TaskSet)")
    return w


def main(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    secrets = Secrets()
    for url in (args.backend, args.store):  # whatever fails, their passwords never show
        secrets.add(*describe(url)[1].values)
    try:
        return asyncio.run(serve(args))
    except AgentnbError as exc:  # ours: one line says what is wrong
        print(secrets.mask(f"agentnb worker: {exc}"), file=sys.stderr)
        return 2
    except Exception as exc:  # the engine's or a driver's: the traceback, masked
        print(secrets.mask("".join(traceback.format_exception(exc))), file=sys.stderr)
        return 1
