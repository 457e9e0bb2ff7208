"""What a worker writes to its log: httpx's warnings, not a line per model request (the ledger
records every call)."""

from __future__ import annotations

import logging

import pytest
from celery.signals import after_setup_logger

import ragq.workers.app  # noqa: F401  (connects the worker's logging handlers)


def test_a_worker_logs_httpx_warnings_but_not_every_request(
        caplog: pytest.LogCaptureFixture) -> None:
    httpx_log = logging.getLogger("httpx")
    saved = httpx_log.level
    try:
        httpx_log.setLevel(logging.NOTSET)
        after_setup_logger.send(sender=None, logger=logging.getLogger(), loglevel=logging.INFO,
                                logfile=None, format="%(message)s", colorize=False)
        with caplog.at_level(logging.INFO):
            httpx_log.info('HTTP Request: POST http://127.0.0.1/v1/chat/completions "200 OK"')
            httpx_log.warning("a retry")
            logging.getLogger("ragq.tasks.runner").info("job=j1 charge refused")
    finally:
        httpx_log.setLevel(saved)
    assert [(r.name, r.getMessage()) for r in caplog.records] == [
        ("httpx", "a retry"), ("ragq.tasks.runner", "job=j1 charge refused")]
