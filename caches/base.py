"""The interfaces the task layer holds: small, and the same for the server-backed caches, the
in-memory fakes and the disabled caches. None of their methods raises on a server failure."""

from __future__ import annotations

from typing import Protocol

from ragq.schemas.cache import CachedEvidence
from ragq.schemas.flow import Plan


class EvidenceCache(Protocol):
    """Evidence of retrieval requests across jobs, keyed by ``retrieval_key``.

    A hit is not yet usable: the caller re-checks it with ``orchestration.cache_check.usable``
    and deletes it when the check says no.
    """

    def get(self, collection: str, key: str) -> CachedEvidence | None:
        """The entry under ``key``; None on a miss, an expired or unreadable entry, or a server
        failure."""
        ...

    def put(self, collection: str, key: str, entry: CachedEvidence) -> bool:
        """Store ``entry`` with the cache's TTL; False when skipped (no hits, server failure)."""
        ...

    def delete(self, collection: str, key: str) -> None:
        """Forget the entry under ``key`` (a no-op when absent or the server is down)."""
        ...

    def drop_collection(self, collection: str) -> int:
        """Forget every entry of ``collection``; returns how many were removed."""
        ...


class PlanCache(Protocol):
    """Validated plans across jobs, keyed by normalized question, provider and max_sub_queries."""

    def get(self, question: str, *, provider: str, max_sub_queries: int) -> Plan | None:
        """The cached plan; None on a miss, an unreadable entry or a server failure."""
        ...

    def put(self, question: str, plan: Plan, *, provider: str, max_sub_queries: int) -> bool:
        """Store ``plan`` with the cache's TTL; False when skipped (server failure)."""
        ...

    def delete(self, question: str, *, provider: str, max_sub_queries: int) -> None:
        """Forget the plan of ``question`` (a no-op when absent or the server is down)."""
        ...
