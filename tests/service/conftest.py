from __future__ import annotations

import itertools
from collections.abc import Iterator

import pytest

from tests.service import pgcluster as pg

_names = itertools.count()


@pytest.fixture(scope="session")
def pg_admin() -> Iterator[str]:
    if not pg.available():
        pytest.fail("Postgres 15 is not installed: `make test` installs it (apt postgresql)")
    with pg.postgres() as url:
        yield url


@pytest.fixture
def pg_url(pg_admin: str) -> str:
    """A fresh, empty database for one test."""
    return pg.create_database(pg_admin, f"t{next(_names)}")
