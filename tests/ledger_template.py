"""A migrated ledger for a test's setup without running every migration for every test.

Running the migrations on a new SQLite file costs about 0.15 s, and the fast suite's fixtures
made about 240 such files (a sixth of its CPU time). :func:`migrated` gives a new SQLite file
a copy of one this process migrated with :func:`ragq.ledger.upgrade` once, the same schema and
revision the migrations produce; anything else (PostgreSQL, a file that already exists) is
upgraded as usual. The migrations themselves are tested where they are the subject
(tests/ledger/test_migrate.py, test_db.py, test_init.py), which call ``upgrade`` directly.
"""

from __future__ import annotations

import atexit
import shutil
import sqlite3
import tempfile
from contextlib import closing
from functools import cache
from pathlib import Path

from sqlalchemy.engine import URL

from ragq.ledger import normalize_url, upgrade


def migrated(url: str | URL) -> None:
    """Bring the ledger at ``url`` to head, as ``upgrade(url)`` does."""
    parsed = normalize_url(url)
    database = parsed.database if parsed.get_backend_name() == "sqlite" else None
    if not database or database == ":memory:" or Path(database).exists():
        upgrade(parsed)
        return
    target = Path(database)
    target.parent.mkdir(parents=True, exist_ok=True)
    with closing(sqlite3.connect(_template())) as source, \
            closing(sqlite3.connect(target)) as copy:
        source.backup(copy)


@cache
def _template() -> Path:
    """A SQLite ledger at head, migrated once per process and removed at its exit."""
    folder = Path(tempfile.mkdtemp(prefix="ragq-ledger-template-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    path = folder / "ledger.db"
    upgrade(f"sqlite:///{path}")
    return path
