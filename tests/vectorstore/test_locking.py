"""The gate that lets close() drain in-flight calls, and the ownership lock file."""

from __future__ import annotations

import os
import threading

import pytest

from ragq.vectorstore import EdgeStoreLockedError, StoreClosedError
from ragq.vectorstore.locking import LOCK_FILE, RootLock, UsageGate


def test_close_waits_for_calls_in_flight_then_refuses_new_ones():
    gate = UsageGate()
    inside, leave, closed = threading.Event(), threading.Event(), threading.Event()

    def call() -> None:
        with gate.use():
            inside.set()
            leave.wait(10)

    caller = threading.Thread(target=call)
    caller.start()
    assert inside.wait(10)
    closer = threading.Thread(target=lambda: (gate.close(), closed.set()))
    closer.start()
    assert not closed.wait(0.2)  # still waiting for the call
    leave.set()
    assert closed.wait(10)
    with pytest.raises(StoreClosedError), gate.use():
        pass
    assert gate.close() is False


def test_many_users_share_the_gate_at_once():
    gate = UsageGate()
    barrier = threading.Barrier(4, timeout=10)

    def call() -> None:
        with gate.use():
            barrier.wait()  # all four inside together, or this times out

    threads = [threading.Thread(target=call) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert not barrier.broken


def test_the_lock_file_names_its_owner_and_is_cleared_on_release(tmp_path):
    lock = RootLock(tmp_path)
    lock.acquire()
    assert (tmp_path / LOCK_FILE).read_text().strip() == str(os.getpid())
    with pytest.raises(EdgeStoreLockedError) as taken:
        RootLock(tmp_path).acquire()
    assert taken.value.owner_pid == os.getpid() and taken.value.lock_path == tmp_path / LOCK_FILE
    lock.release()
    lock.release()  # idempotent
    again = RootLock(tmp_path)
    again.acquire()
    again.release()
