"""Starting waiting jobs from outside a flow step checks the broker before it claims: a broker
that is down leaves every job waiting (unclaimed), to be started by the next sweep at once."""

from __future__ import annotations

import socket

import pytest
from kombu.exceptions import OperationalError

from ragq.ledger import add_job, get_job, make_engine, session_scope
from ragq.settings import build_settings
from ragq.workers.app import create_app
from ragq.workers.waiting import start_waiting_jobs
from tests.conftest import inherited_settings
from tests.ledger_template import migrated


def test_a_broker_that_is_down_fails_the_start_before_any_job_is_claimed(tmp_path, monkeypatch):
    # A ledger of its own: a session stack's settings in the environment would put this job in
    # that stack's ledger, whose own sweep would start it.
    for key in inherited_settings():
        monkeypatch.delenv(key)
    # A port held bound and not listening refuses every connection, and no server another
    # test starts meanwhile can take it (a port that was merely free once could be).
    held = socket.socket()
    held.bind(("127.0.0.1", 0))
    nobody = held.getsockname()[1]
    settings = build_settings(home=tmp_path, broker_url=f"redis://127.0.0.1:{nobody}/0")
    migrated(settings.ledger_url)
    engine = make_engine(settings.ledger_url)
    with session_scope(engine) as session:
        job_id = add_job(session, batch_id=None, custom_id=None, position=None, tenant="t",
                         collection="c", question="q?", acl=["public"]).id
    app = create_app(settings)
    app.conf.broker_connection_timeout = 1
    with pytest.raises(OperationalError):
        start_waiting_jobs(app, engine, settings)
    with session_scope(engine, readonly=True) as session:
        assert get_job(session, job_id=job_id).dispatched_at is None
    engine.dispose()
    held.close()
