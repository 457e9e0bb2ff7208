"""The plan cache on a real server: round trip, TTL, and which questions share a plan."""

from __future__ import annotations

import redis

from ragq.caches import RedisPlanCache, plan_key
from ragq.schemas.flow import Plan, PlannedSubQuery, Strategy

PLAN = Plan(sub_queries=[PlannedSubQuery(text="Who founded Acme?"),
                         PlannedSubQuery(text="When was {0} born?", depends_on=[0])],
            strategy=Strategy.CHAIN, reason="two hops")
QUESTION = "When was the founder of Acme born?"


def test_put_then_get_returns_the_plan(plan_cache: RedisPlanCache, client: redis.Redis,
                                       provider: str) -> None:
    assert plan_cache.get(QUESTION, provider=provider, max_sub_queries=4) is None
    assert plan_cache.put(QUESTION, PLAN, provider=provider, max_sub_queries=4) is True
    assert plan_cache.get(QUESTION, provider=provider, max_sub_queries=4) == PLAN
    name = plan_key(QUESTION, provider=provider, max_sub_queries=4)
    assert name.startswith("ragq:plan:")
    assert 0 < client.ttl(name) <= 120
    plan_cache.delete(QUESTION, provider=provider, max_sub_queries=4)
    assert plan_cache.get(QUESTION, provider=provider, max_sub_queries=4) is None


def test_the_same_question_modulo_case_space_and_punctuation_hits(
        plan_cache: RedisPlanCache, provider: str) -> None:
    plan_cache.put(QUESTION, PLAN, provider=provider, max_sub_queries=4)
    for variant in ("  when WAS the founder of acme   born ", "When was the founder of Acme "
                    "born", "when\twas the\nfounder of ACME born?"):
        assert plan_cache.get(variant, provider=provider, max_sub_queries=4) == PLAN


def test_another_max_sub_queries_provider_or_question_misses(
        plan_cache: RedisPlanCache, provider: str) -> None:
    plan_cache.put(QUESTION, PLAN, provider=provider, max_sub_queries=4)
    assert plan_cache.get(QUESTION, provider=provider, max_sub_queries=3) is None
    assert plan_cache.get(QUESTION, provider=f"{provider}-x", max_sub_queries=4) is None
    assert plan_cache.get("When was the founder of Acme buried?", provider=provider,
                          max_sub_queries=4) is None


def test_an_unreadable_plan_is_a_miss_and_is_removed(
        plan_cache: RedisPlanCache, client: redis.Redis, provider: str) -> None:
    name = plan_key(QUESTION, provider=provider, max_sub_queries=2)
    client.set(name, b'{"sub_queries": [{"txt": "old contract"}]}', ex=60)
    assert plan_cache.get(QUESTION, provider=provider, max_sub_queries=2) is None
    assert not client.exists(name)


def test_plan_keys_use_the_shared_normal_form_placeholders_included() -> None:
    def key(question: str) -> str:
        return plan_key(question, provider="offline", max_sub_queries=4)

    assert key("Ｗｈｏ founded ACME?") == key("who founded acme")
    assert key("Compare {0} with {1}") != key("Compare 0 with 1")
