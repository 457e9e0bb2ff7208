"""The caches built from settings: on the stack's server by default, off when asked or when
no server is known."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragq.caches import (
    DisabledEvidenceCache,
    DisabledPlanCache,
    RedisEvidenceCache,
    RedisPlanCache,
    resolve_cache_url,
)
from ragq.errors import ConfigurationError
from ragq.orchestration.cache_check import evidence_entry
from ragq.settings import build_settings
from ragq.workers.wiring import build_evidence_cache, build_plan_cache
from tests.caches.conftest import hit
from tests.conftest import Stack


def test_the_defaults() -> None:
    settings = build_settings()
    assert settings.cache_enabled is True
    assert settings.cache_url is None
    assert settings.evidence_cache_ttl_s == 3600
    assert settings.plan_cache_ttl_s == 86_400


def test_by_default_the_caches_live_on_the_stack_server(stack: Stack, collection: str) -> None:
    cache = build_evidence_cache(stack.settings)
    assert isinstance(cache, RedisEvidenceCache)
    assert cache.ttl_s == stack.settings.evidence_cache_ttl_s
    entry = evidence_entry([hit()], requester_acl=["staff"])
    assert cache.put(collection, "k", entry) and cache.get(collection, "k") == entry
    cache.drop_collection(collection)
    plans = build_plan_cache(stack.settings)
    assert isinstance(plans, RedisPlanCache) and plans.ttl_s == 86_400


def test_an_explicit_cache_url_and_ttls_are_used(redis_url: str, tmp_path: Path) -> None:
    settings = build_settings(home=tmp_path, cache_url=redis_url, evidence_cache_ttl_s=7,
                              plan_cache_ttl_s=9)
    evidence, plans = build_evidence_cache(settings), build_plan_cache(settings)
    assert isinstance(evidence, RedisEvidenceCache) and evidence.ttl_s == 7
    assert isinstance(plans, RedisPlanCache) and plans.ttl_s == 9


def test_disabled_caches_always_miss(redis_url: str, tmp_path: Path) -> None:
    settings = build_settings(home=tmp_path, cache_url=redis_url, cache_enabled=False)
    evidence, plans = build_evidence_cache(settings), build_plan_cache(settings)
    assert isinstance(evidence, DisabledEvidenceCache) and isinstance(plans, DisabledPlanCache)
    assert evidence.put("kb", "k", evidence_entry([hit()], requester_acl=["a"])) is False
    assert evidence.get("kb", "k") is None


def test_without_any_known_server_the_caches_are_disabled(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    settings = build_settings(home=tmp_path / "never-up", broker_url=None, cache_url=None,
                              result_backend_url=None)
    assert isinstance(build_evidence_cache(settings), DisabledEvidenceCache)
    assert "RAGQ_CACHE_URL" in caplog.text


def test_a_cache_url_that_is_not_redis_is_refused_with_the_fix(tmp_path: Path) -> None:
    settings = build_settings(home=tmp_path, cache_url="amqp://guest@localhost//")
    with pytest.raises(ConfigurationError, match="redis://"):
        build_evidence_cache(settings)


@pytest.mark.parametrize(("cache", "backend", "broker", "expected"), [
    (None, None, "redis://b:6379/0", "redis://b:6379/0"),
    (None, "redis://r:6379/1", "amqp://b//", "redis://r:6379/1"),
    (None, None, "amqp://b//", None),
    ("rediss://c:6380/2", "redis://r/1", "redis://b/0", "rediss://c:6380/2"),
    (None, None, None, None),
])
def test_which_server_the_caches_use(cache: str | None, backend: str | None, broker: str | None,
                                     expected: str | None) -> None:
    assert resolve_cache_url(cache_url=cache, result_backend_url=backend,
                             broker_url=broker) == expected
