"""The package's suite runs against CLARION_DATABASE_URL (SQLite or
PostgreSQL), and fails, never skips, without one. Ids are unique per test,
so one database holds every run."""

from __future__ import annotations

import importlib.metadata
import os
from collections.abc import Iterator

import pytest

from typing import TYPE_CHECKING

from clarion import Clarion, OpenError

if TYPE_CHECKING:
    from clarion.testing import Mirror

# An installed package registers clarion.testing as an entry point already;
# registering it twice is an error.
pytest_plugins = ["pytester"]
if not any(ep.name == "clarion" for ep in importlib.metadata.entry_points(group="pytest11")):
    pytest_plugins.append("clarion.testing")


@pytest.fixture(scope="session")
def database_url() -> str:
    url = os.environ.get("CLARION_DATABASE_URL", "")
    if not url:
        pytest.fail("CLARION_DATABASE_URL is unset: the suite needs a SQLite or PostgreSQL URL")
    return url


@pytest.fixture(scope="session")
def shared(database_url: str) -> Iterator[Clarion]:
    try:
        handle = Clarion.open(database_url)
    except OpenError as error:
        pytest.fail(f"cannot open CLARION_DATABASE_URL: {error}")
    yield handle
    handle.close()


@pytest.fixture
def clarion_database_url(database_url: str) -> str:
    """clarion.testing's fixtures open the suite's database too."""
    return database_url


@pytest.fixture
def c(shared: Clarion) -> Clarion:
    """The session's handle, acting as the system."""
    return shared


@pytest.fixture
def m(shared: Clarion) -> Mirror:
    """A workspace of its own (its owner unique to the test), task and session."""
    import uuid

    from clarion.testing import mirror

    return mirror(shared, owner=f"alice-{uuid.uuid4().hex[:8]}")
