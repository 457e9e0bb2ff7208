"""Two hosts, one dies: two worker groups with their own host names, as on two
machines, on one broker and one PostgreSQL ledger, each with its own `ragq sweeper`. One whole
group is SIGKILLed at about 40 % of a 50-job batch and nothing restarts it: every job ends, none
runs out of latency budget, and the ledger holds nothing twice.

The broker is a Valkey server of the test's own: on a Redis-protocol broker a dead worker's
messages come back only after the visibility timeout (11 minutes), so what resumes them here is
the surviving host's sweeper, which takes the lease over from the dead one's. (RabbitMQ requeues
them itself; its run is `bench/two_hosts.py --broker amqp://…`, kept out of the test run because
the session's RabbitMQ stack consumes the same queues.)"""

from __future__ import annotations

import faulthandler
import os
from pathlib import Path

import pytest

from bench.recovery import dispose_ledger_engine, tickets_file
from bench.two_hosts import (
    drill_two_hosts,
    front_door,
    host_env,
    ingest_examples,
    own_valkey,
    two_hosts,
)
from ragq.schemas.statuses import JobStatus
from tests.conftest import POSTGRES_URL, _drop_postgres_database, _fresh_postgres_database

#: Bounds of the drill's phases on a loaded 2-core machine, where it takes about 75 s in all
#: (workers up about 20 s, kill to the last end 35-55 s): a hang fails with the drill's
#: diagnosis (DrillStuck) instead of holding the run.
BEFORE_KILL_S = 240.0
AFTER_KILL_S = 240.0
#: The whole test, bounds and the hosts' start and stop included: past it, the stacks of every
#: thread of the test process are written to stderr (a wait the bounds do not cover).
WATCHDOG_S = 900.0


def test_the_drills_front_door_reads_no_setting_of_another_stack(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch):
    """In CI the drill ran while the session's RabbitMQ stack had put its settings in this
    process's environment: the front door then followed the ingest on that stack's result
    backend, not on the hosts', and waited for an hour."""
    theirs = {"RAGQ_RESULT_BACKEND_URL": "redis://127.0.0.1:1/14",
              "RAGQ_BROKER_URL": "amqp://guest:guest@127.0.0.1:1//", "RAGQ_MAX_OPEN_JOBS": "3"}
    for key, value in theirs.items():
        monkeypatch.setenv(key, value)
    servers = {"broker_url": "redis://127.0.0.1:2/0", "database_url": "postgresql://h/d"}

    with front_door(host_env(tmp_path / "a", servers)) as settings:
        assert settings.broker_url == servers["broker_url"]
        assert settings.result_backend_url is None  # the broker's, as the workers have it
        assert settings.max_open_jobs is None
        assert settings.home == tmp_path / "a"

    for key, value in theirs.items():  # put back for the session's stack
        assert os.environ[key] == value


@pytest.mark.stack
@pytest.mark.skipif(not POSTGRES_URL, reason="set RAGQ_TEST_POSTGRES_URL: the hosts share a "
                    "PostgreSQL ledger")
def test_a_host_killed_mid_batch_leaves_every_job_ended_and_nothing_paid_twice(tmp_path: Path):
    assert POSTGRES_URL
    database, name = _fresh_postgres_database(POSTGRES_URL)
    faulthandler.dump_traceback_later(WATCHDOG_S, exit=False)
    try:
        with own_valkey(tmp_path) as broker, \
                two_hosts(tmp_path, {"broker_url": broker, "database_url": database}) as hosts:
            settings, host_a, host_b = hosts
            try:
                ingest_examples(settings, "two")
                result, after_kill = drill_two_hosts(
                    settings, host_b, tickets_file(tmp_path / "t.jsonl", 50, "two"), "two",
                    before_kill_s=BEFORE_KILL_S, after_kill_s=AFTER_KILL_S, a=host_a)
            finally:
                dispose_ledger_engine(settings)
    finally:
        faulthandler.cancel_dump_traceback_later()
        _drop_postgres_database(POSTGRES_URL, name)
    print(f"two hosts: {result.open_at_kill} open at the kill, last end {after_kill:.1f}s "
          f"after it; {dict(result.statuses)}")  # shown with -s: the drill's figure
    assert result.all_ended, result.statuses
    assert 0 < result.open_at_kill < 50
    assert set(result.statuses) <= {JobStatus.COMPLETED, JobStatus.INSUFFICIENT_EVIDENCE,
                                    JobStatus.NEEDS_REVIEW}, result.errors
    assert result.latency_exhausted == 0
    assert result.doubled == {"answers": 0, "charges": 0, "evidence": 0, "steps paid twice": 0}
    assert after_kill < AFTER_KILL_S
