"""The disabled caches, built when ``RAGQ_CACHE_ENABLED=false`` or no server is known: the same
interfaces, always a miss, so the task layer never asks whether caching is on."""

from __future__ import annotations

from ragq.schemas.cache import CachedEvidence
from ragq.schemas.flow import Plan


class DisabledEvidenceCache:
    """:class:`caches.EvidenceCache` that always misses and stores nothing."""

    def get(self, collection: str, key: str) -> CachedEvidence | None:
        return None

    def put(self, collection: str, key: str, entry: CachedEvidence) -> bool:
        return False

    def delete(self, collection: str, key: str) -> None:
        return None

    def drop_collection(self, collection: str) -> int:
        return 0


class DisabledPlanCache:
    """:class:`caches.PlanCache` that always misses and stores nothing."""

    def get(self, question: str, *, provider: str, max_sub_queries: int) -> Plan | None:
        return None

    def put(self, question: str, plan: Plan, *, provider: str, max_sub_queries: int) -> bool:
        return False

    def delete(self, question: str, *, provider: str, max_sub_queries: int) -> None:
        return None
