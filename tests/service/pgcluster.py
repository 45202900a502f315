"""A throwaway Postgres 15 on 127.0.0.1 for the service tests (Debian's packages).

initdb refuses to run as root, so the cluster belongs to the ``postgres`` user when the tests
run as root. The cluster lives in a temporary folder, listens on a free loopback port only,
and is stopped (and removed) when the test session ends.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

BIN = Path("/usr/lib/postgresql/15/bin")


def available() -> bool:
    return (BIN / "initdb").exists()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _as_owner(cmd: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *cmd] if os.geteuid() == 0 else cmd


@contextlib.contextmanager
def postgres() -> Iterator[str]:
    """Start a cluster; yield the admin url (``postgresql://postgres@127.0.0.1:PORT/postgres``)."""
    with cluster() as running:
        yield running.url


class Cluster:
    """A running cluster: its admin url, and a way to restart it (connections drop)."""

    def __init__(self, url: str, data: Path, options: str, log: Path) -> None:
        self.url, self.data, self.options, self.log = url, data, options, log

    def _ctl(self, *args: str) -> None:
        cmd = [str(BIN / "pg_ctl"), "-D", str(self.data), *args]
        subprocess.run(_as_owner(cmd), check=True, capture_output=True)

    def stop(self) -> None:
        self._ctl("-m", "fast", "-w", "stop")  # (immediate loses commits: synchronous_commit=off)

    def start(self) -> None:
        self._ctl("-o", self.options, "-l", str(self.log), "-w", "-t", "60", "start")
        _wait(self.url)

    def restart(self) -> None:
        self.stop()
        self.start()


@contextlib.contextmanager
def cluster() -> Iterator[Cluster]:
    """Start a cluster of its own (a test that restarts or stops it needs one)."""
    root = Path(tempfile.mkdtemp(prefix="agentnb-pg-"))
    data = root / "data"
    if os.geteuid() == 0:
        shutil.chown(root, "postgres", "postgres")
    port = _free_port()
    subprocess.run(
        _as_owner(
            [
                str(BIN / "initdb"),
                "-D",
                str(data),
                "-U",
                "postgres",
                "-A",
                "trust",
                "--no-sync",
                "-E",
                "UTF8",
            ]
        ),
        check=True,
        capture_output=True,
    )
    options = (
        f"-c listen_addresses=127.0.0.1 -c port={port} -c unix_socket_directories={root} "
        "-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
    )
    subprocess.run(
        _as_owner(
            [
                str(BIN / "pg_ctl"),
                "-D",
                str(data),
                "-o",
                options,
                "-l",
                str(root / "log"),
                "-w",
                "-t",
                "60",
                "start",
            ]
        ),
        check=True,
        capture_output=True,
    )
    try:
        url = f"postgresql://postgres@127.0.0.1:{port}/postgres"
        _wait(url)
        yield Cluster(url, data, options, root / "log")
    finally:
        subprocess.run(
            _as_owner([str(BIN / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"]),
            capture_output=True,
        )
        shutil.rmtree(root, ignore_errors=True)


def _wait(url: str) -> None:
    import psycopg

    deadline = time.monotonic() + 30
    while True:
        try:
            psycopg.connect(url, connect_timeout=2).close()
            return
        except psycopg.OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def create_database(admin_url: str, name: str) -> str:
    """A fresh database on the cluster; returns its url."""
    import psycopg

    with psycopg.connect(admin_url, autocommit=True) as db:
        db.execute(f'DROP DATABASE IF EXISTS "{name}"')
        db.execute(f'CREATE DATABASE "{name}"')
    return admin_url.rsplit("/", 1)[0] + "/" + name
