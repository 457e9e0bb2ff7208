"""A cache server that is down, silent or erroring is a miss, never a failed job."""

from __future__ import annotations

import logging
import time

import pytest
from redis import exceptions as rx

from ragq.caches import (
    RedisEvidenceCache,
    RedisPlanCache,
    ServerGuard,
    connect,
)
from ragq.orchestration.cache_check import evidence_entry
from ragq.schemas.flow import Plan, PlannedSubQuery
from tests.caches.conftest import hit

PLAN = Plan(sub_queries=[PlannedSubQuery(text="q")])


def test_a_closed_port_is_a_miss_and_puts_are_skipped(
        closed_port_url: str, caplog: pytest.LogCaptureFixture) -> None:
    guard = ServerGuard("evidence", retry_after_s=30)
    cache = RedisEvidenceCache(connect(closed_port_url, timeout_s=0.5), ttl_s=60, guard=guard)
    entry = evidence_entry([hit()], requester_acl=["staff"])
    with caplog.at_level(logging.WARNING, logger="ragq.caches"):
        assert cache.get("kb", "k") is None
    assert guard.suspended
    assert "treated as a miss" in caplog.text and "ragq:ev:kb:k" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="ragq.caches"):
        assert cache.put("kb", "k", entry) is False
        cache.delete("kb", "k")
        assert cache.drop_collection("kb") == 0
    assert caplog.text == ""  # suspended: no connect attempts, no repeated warnings


def test_the_server_is_tried_again_after_the_quiet_period(closed_port_url: str) -> None:
    now = [0.0]
    guard = ServerGuard("plan", retry_after_s=5, clock=lambda: now[0])
    calls: list[int] = []

    def refused() -> bytes:
        calls.append(1)
        raise rx.ConnectionError("refused")

    assert guard.call(refused, None, what="get", key="k") is None
    assert guard.call(refused, None, what="get", key="k") is None
    assert len(calls) == 1
    now[0] = 5.0
    assert guard.call(refused, None, what="get", key="k") is None
    assert len(calls) == 2


def test_a_silent_server_times_out_into_a_miss(silent_server_url: str) -> None:
    cache = RedisPlanCache(connect(silent_server_url, timeout_s=0.2), ttl_s=60)
    started = time.monotonic()
    assert cache.get("q", provider="offline", max_sub_queries=3) is None
    assert time.monotonic() - started < 2.0


class _Failing:
    """A client whose every command raises ``exc``: stands for the server failing each way."""

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc

    def __getattr__(self, name: str) -> object:
        def fail(*args: object, **kwargs: object) -> object:
            raise self.exc

        return fail


VENDOR_ERRORS = [
    rx.ConnectionError("refused"),
    rx.TimeoutError("timed out"),
    rx.AuthenticationError("bad password"),
    rx.BusyLoadingError("loading"),
    rx.ReadOnlyError("replica"),
    rx.ResponseError("OOM command not allowed"),
    rx.DataError("bad value"),
    rx.RedisError("anything else"),
    ConnectionResetError("reset by peer"),
    OSError("socket"),
]


@pytest.mark.parametrize("exc", VENDOR_ERRORS, ids=lambda e: type(e).__name__)
def test_every_server_error_is_a_miss(exc: BaseException) -> None:
    evidence = RedisEvidenceCache(_Failing(exc), ttl_s=60)  # type: ignore[arg-type]
    plans = RedisPlanCache(_Failing(exc), ttl_s=60)  # type: ignore[arg-type]
    assert evidence.get("kb", "k") is None
    assert evidence.put("kb", "k", evidence_entry([hit()], requester_acl=["a"])) is False
    evidence.delete("kb", "k")
    assert evidence.drop_collection("kb") == 0
    assert plans.get("q", provider="p", max_sub_queries=2) is None
    assert plans.put("q", PLAN, provider="p", max_sub_queries=2) is False
    plans.delete("q", provider="p", max_sub_queries=2)


def test_a_programming_error_is_not_swallowed() -> None:
    cache = RedisEvidenceCache(_Failing(TypeError("bug")), ttl_s=60)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        cache.get("kb", "k")
