"""Caches without a server: in-memory fakes for tests of the task layer, and the disabled caches
built when ``RAGQ_CACHE_ENABLED=false`` or no server is known. Same interfaces, same promises."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from caches.keys import EVIDENCE_PREFIX, evidence_key, plan_key
from schemas.cache import CachedEvidence
from schemas.flow import Plan


class _Expiring:
    """A dict whose values expire ``ttl_s`` seconds after they were put."""

    def __init__(self, ttl_s: int, clock: Callable[[], float]) -> None:
        self.ttl_s = ttl_s
        self._clock = clock
        self._lock = threading.Lock()
        self._items: dict[str, tuple[float, str]] = {}

    def get(self, name: str) -> str | None:
        with self._lock:
            found = self._items.get(name)
            if found is None or found[0] <= self._clock():
                self._items.pop(name, None)
                return None
            return found[1]

    def put(self, name: str, body: str) -> None:
        with self._lock:
            self._items[name] = (self._clock() + self.ttl_s, body)

    def delete(self, names: list[str]) -> None:
        with self._lock:
            for name in names:
                self._items.pop(name, None)

    def names(self) -> list[str]:
        with self._lock:
            return list(self._items)


class InMemoryEvidenceCache:
    """:class:`caches.EvidenceCache` in a dict of JSON (so entries round-trip as on a server)."""

    def __init__(self, *, ttl_s: int = 3600, clock: Callable[[], float] = time.monotonic):
        self._items = _Expiring(ttl_s, clock)

    def get(self, collection: str, key: str) -> CachedEvidence | None:
        body = self._items.get(evidence_key(collection, key))
        return CachedEvidence.model_validate_json(body) if body is not None else None

    def put(self, collection: str, key: str, entry: CachedEvidence) -> bool:
        if not entry.hits:
            return False
        self._items.put(evidence_key(collection, key), entry.model_dump_json())
        return True

    def delete(self, collection: str, key: str) -> None:
        self._items.delete([evidence_key(collection, key)])

    def drop_collection(self, collection: str) -> int:
        prefix = f"{EVIDENCE_PREFIX}:{collection}:"
        names = [n for n in self._items.names()
                 if n.startswith(prefix) and ":" not in n[len(prefix):]]
        self._items.delete(names)
        return len(names)


class InMemoryPlanCache:
    """:class:`caches.PlanCache` in a dict of JSON."""

    def __init__(self, *, ttl_s: int = 86_400, clock: Callable[[], float] = time.monotonic):
        self._items = _Expiring(ttl_s, clock)

    def get(self, question: str, *, provider: str, max_sub_queries: int) -> Plan | None:
        body = self._items.get(plan_key(question, provider=provider,
                                        max_sub_queries=max_sub_queries))
        return Plan.model_validate_json(body) if body is not None else None

    def put(self, question: str, plan: Plan, *, provider: str, max_sub_queries: int) -> bool:
        self._items.put(plan_key(question, provider=provider, max_sub_queries=max_sub_queries),
                        plan.model_dump_json())
        return True

    def delete(self, question: str, *, provider: str, max_sub_queries: int) -> None:
        self._items.delete([plan_key(question, provider=provider,
                                     max_sub_queries=max_sub_queries)])


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
