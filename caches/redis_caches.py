"""The caches on a Redis-protocol server: the embedded Valkey of `ragq up`, or a real Redis.

Entries are JSON of the pydantic contracts, written with ``SET … EX ttl`` so the server expires
them. An entry that no longer parses (the contract changed since it was written) is a miss and is
deleted. Server errors never escape: see :class:`caches.guard.ServerGuard`.
"""

from __future__ import annotations

import logging
from typing import TypeVar

import redis
from pydantic import BaseModel, ValidationError

from ragq.caches.guard import ServerGuard
from ragq.caches.keys import EVIDENCE_PREFIX, evidence_key, evidence_pattern, plan_key
from ragq.schemas.cache import CachedEvidence
from ragq.schemas.flow import Plan

log = logging.getLogger(__name__)

M = TypeVar("M", bound=BaseModel)

_UNLINK_BATCH = 500


class _JsonStore:
    """Typed JSON values with a TTL, behind a guard."""

    def __init__(self, client: redis.Redis, *, ttl_s: int, guard: ServerGuard) -> None:
        if ttl_s < 1:
            raise ValueError(f"ttl_s must be at least 1 second, got {ttl_s}")
        self.client = client
        self.ttl_s = ttl_s
        self.guard = guard

    def read(self, name: str, model: type[M]) -> M | None:
        raw = self.guard.call(lambda: self.client.get(name), None, what="get", key=name)
        if raw is None:
            return None
        try:
            return model.model_validate_json(raw)
        except ValidationError as exc:
            log.warning("%s cache entry %s unreadable, dropped: %s", self.guard.name, name,
                        exc.errors()[0].get("msg", exc))
            self.delete(name)
            return None

    def write(self, name: str, value: BaseModel) -> bool:
        body = value.model_dump_json()
        return self.guard.call(lambda: bool(self.client.set(name, body, ex=self.ttl_s)), False,
                               what="put", key=name)

    def delete(self, name: str) -> None:
        self.guard.call(lambda: self.client.delete(name), 0, what="delete", key=name)


class RedisEvidenceCache:
    """:class:`caches.EvidenceCache` on a Redis-protocol server; ``ttl_s`` in seconds."""

    def __init__(self, client: redis.Redis, *, ttl_s: int,
                 guard: ServerGuard | None = None) -> None:
        self._store = _JsonStore(client, ttl_s=ttl_s, guard=guard or ServerGuard("evidence"))

    @property
    def ttl_s(self) -> int:
        return self._store.ttl_s

    def get(self, collection: str, key: str) -> CachedEvidence | None:
        """The entry under ``key``, not yet re-checked; None on a miss or a server failure."""
        return self._store.read(evidence_key(collection, key), CachedEvidence)

    def put(self, collection: str, key: str, entry: CachedEvidence) -> bool:
        """Store ``entry`` for ``ttl_s``; an entry without hits is not stored (an empty result
        is the likeliest to be outdated by the next ingest). False when not stored."""
        if not entry.hits:
            return False
        return self._store.write(evidence_key(collection, key), entry)

    def delete(self, collection: str, key: str) -> None:
        """Forget the entry under ``key``; what a caller does when the re-check says no."""
        self._store.delete(evidence_key(collection, key))

    def drop_collection(self, collection: str) -> int:
        """Forget every entry of ``collection`` (SCAN, then UNLINK in batches); returns how many
        were removed, 0 when the server is down."""
        prefix = f"{EVIDENCE_PREFIX}:{collection}:"

        def drop() -> int:
            client = self._store.client
            names = [n for n in client.scan_iter(match=evidence_pattern(collection), count=1000)
                     if b":" not in n[len(prefix):]]  # not a collection named "{collection}:x"
            for start in range(0, len(names), _UNLINK_BATCH):
                client.unlink(*names[start : start + _UNLINK_BATCH])
            return len(names)

        return self._store.guard.call(drop, 0, what="drop", key=prefix)


class RedisPlanCache:
    """:class:`caches.PlanCache` on a Redis-protocol server; ``ttl_s`` in seconds."""

    def __init__(self, client: redis.Redis, *, ttl_s: int,
                 guard: ServerGuard | None = None) -> None:
        self._store = _JsonStore(client, ttl_s=ttl_s, guard=guard or ServerGuard("plan"))

    @property
    def ttl_s(self) -> int:
        return self._store.ttl_s

    def get(self, question: str, *, provider: str, max_sub_queries: int) -> Plan | None:
        """The plan cached for this question, provider and max_sub_queries, or None."""
        return self._store.read(plan_key(question, provider=provider,
                                         max_sub_queries=max_sub_queries), Plan)

    def put(self, question: str, plan: Plan, *, provider: str, max_sub_queries: int) -> bool:
        """Store ``plan`` for ``ttl_s``; False when the server failed."""
        return self._store.write(plan_key(question, provider=provider,
                                          max_sub_queries=max_sub_queries), plan)

    def delete(self, question: str, *, provider: str, max_sub_queries: int) -> None:
        """Forget the plan of ``question``."""
        self._store.delete(plan_key(question, provider=provider,
                                    max_sub_queries=max_sub_queries))
