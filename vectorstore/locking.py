"""Ownership of an embedded store by one process, and a gate that lets ``close`` drain its users.

The embedded engine keeps its files open and is not built for two processes: the first process
takes an exclusive ``flock`` on a lock file in the store root and writes its pid there, so the
second one fails at once with a message naming the owner instead of corrupting data or failing
deep inside the engine. The kernel drops the lock when the owner dies, so there are no stale
locks to clean up after a crash.
"""

from __future__ import annotations

import errno
import fcntl
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ragq.errors import RetrievalError
from ragq.vectorstore.errors import EdgeStoreLockedError, StoreClosedError

LOCK_FILE = ".owner.lock"


class RootLock:
    """An exclusive, non-blocking ``flock`` on ``root/.owner.lock`` holding the owner's pid."""

    def __init__(self, root: Path):
        self.path = root / LOCK_FILE
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock; raise ``EdgeStoreLockedError`` naming the owner if it is taken."""
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            owner = _read_pid(fd)
            os.close(fd)
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise EdgeStoreLockedError(self.path, owner) from exc
            raise RetrievalError(f"cannot lock {self.path}: {exc}") from exc
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        os.fsync(fd)
        self._fd = fd

    def release(self) -> None:
        """Clear the pid and drop the lock; a no-op when not held."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        os.ftruncate(fd, 0)
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def _read_pid(fd: int) -> int | None:
    """The pid the owner wrote, or None while it has not written it yet."""
    try:
        return int(os.pread(fd, 32, 0).decode().strip())
    except (OSError, ValueError):
        return None


class UsageGate:
    """Lets any number of threads use a resource at once; ``close`` waits until they are done.

    Readers of the engine need no mutual exclusion, only a guarantee that the shard they hold
    is not closed under them; this is that guarantee, without serialising them.
    """

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._users = 0
        self._closed = False

    @contextmanager
    def use(self) -> Iterator[None]:
        """Mark one use for the duration of the block; raise ``StoreClosedError`` once closed."""
        with self._cond:
            if self._closed:
                raise StoreClosedError("the vector store is closed; build a new one to use it")
            self._users += 1
        try:
            yield
        finally:
            with self._cond:
                self._users -= 1
                if not self._users:
                    self._cond.notify_all()

    def close(self) -> bool:
        """Refuse new uses and wait for current ones; False if it was already closed."""
        with self._cond:
            if self._closed:
                return False
            self._closed = True
            self._cond.wait_for(lambda: self._users == 0)
            return True
