"""The evidence cache on a real server: round trip, TTL, re-check on use, and dropping."""

from __future__ import annotations

import time
from pathlib import Path

import redis

from ragq.caches import RedisEvidenceCache, connect, evidence_key
from ragq.ledger import current_versions, make_engine, session_scope, upsert_document
from ragq.orchestration.cache_check import acl_fingerprint, evidence_entry, usable
from ragq.orchestration.retrieval_keys import retrieval_key
from tests.caches.conftest import hit
from tests.ledger_template import migrated


def _key(text: str, collection: str, acl: list[str]) -> str:
    return retrieval_key(text, collection=collection, acl=acl, top_k=5)


def test_put_then_get_returns_the_entry(evidence_cache: RedisEvidenceCache,
                                        client: redis.Redis, collection: str) -> None:
    entry = evidence_entry([hit("d1", "c1"), hit("d2", "c2", version="v3")],
                           requester_acl=["staff"])
    key = _key("How long do refunds take?", collection, ["staff"])
    assert evidence_cache.get(collection, key) is None
    assert evidence_cache.put(collection, key, entry) is True
    assert evidence_cache.get(collection, key) == entry
    name = evidence_key(collection, key)
    assert name == f"ragq:ev:{collection}:{key}"
    assert 0 < client.ttl(name) <= 60


def test_an_entry_expires_after_its_ttl(redis_url: str, client: redis.Redis,
                                        collection: str) -> None:
    cache = RedisEvidenceCache(connect(redis_url, timeout_s=2.0), ttl_s=1)
    entry = evidence_entry([hit()], requester_acl=["staff"])
    assert cache.put(collection, "k-ttl", entry)
    assert 0 < client.pttl(evidence_key(collection, "k-ttl")) <= 1000
    time.sleep(1.1)
    assert cache.get(collection, "k-ttl") is None


def test_an_entry_without_hits_is_not_stored(evidence_cache: RedisEvidenceCache,
                                             client: redis.Redis, collection: str) -> None:
    assert evidence_cache.put(collection, "k-empty", evidence_entry([], requester_acl=["a"])) \
        is False
    assert not client.exists(evidence_key(collection, "k-empty"))


def test_a_staff_entry_read_back_is_not_usable_for_public_and_vice_versa(
        evidence_cache: RedisEvidenceCache, collection: str) -> None:
    shared = (hit(acl=("staff", "public")),)
    for cached_for, asker in ((["staff"], ["public"]), (["public"], ["staff"])):
        key = _key("refunds", collection, cached_for)
        evidence_cache.put(collection, key, evidence_entry(shared, requester_acl=cached_for))
        entry = evidence_cache.get(collection, key)
        assert entry is not None
        assert usable(entry, requester_acl=cached_for, current_versions={"d1": "v1"}).ok
        ok, reason = usable(entry, requester_acl=asker, current_versions={"d1": "v1"})
        assert not ok and reason.startswith("acl")


def test_chunk_acls_survive_the_round_trip_and_are_rechecked(
        evidence_cache: RedisEvidenceCache, collection: str) -> None:
    from ragq.schemas.cache import CachedEvidence

    forged = CachedEvidence(hits=[hit("d1", "c1"), hit("d2", "c2", acl=("legal",))],
                            acl_fingerprint=acl_fingerprint(["staff"]),
                            source_versions={"d1": "v1", "d2": "v1"})
    evidence_cache.put(collection, "k-forged", forged)
    entry = evidence_cache.get(collection, "k-forged")
    assert entry is not None and entry.hits[1].acl == ["legal"]
    ok, reason = usable(entry, requester_acl=["staff"], current_versions={"d1": "v1", "d2": "v1"})
    assert not ok and "c2" in reason


def test_a_reingested_document_makes_the_hit_stale_and_the_caller_drops_it(
        evidence_cache: RedisEvidenceCache, collection: str, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    migrated(url)
    engine = make_engine(url)

    def register(version: str) -> None:
        with session_scope(engine) as session:
            upsert_document(session, collection=collection, doc_id="d1", title="Refund policy",
                            source_version=version, content_hash=version, acl=["staff"],
                            authority_tier=1, chunk_count=1)

    def lookup() -> tuple[bool, str]:
        entry = evidence_cache.get(collection, "k-stale")
        assert entry is not None
        with session_scope(engine) as session:
            versions = current_versions(session, collection=collection, doc_ids=entry.doc_ids)
        return usable(entry, requester_acl=["staff"], current_versions=versions)

    try:
        register("v1")
        evidence_cache.put(collection, "k-stale", evidence_entry([hit()], requester_acl=["staff"]))
        assert lookup() == (True, "usable")
        register("v2")
        assert lookup() == (False, "stale: doc d1 v1 -> v2")
        evidence_cache.delete(collection, "k-stale")
        assert evidence_cache.get(collection, "k-stale") is None
    finally:
        engine.dispose()


def test_an_unreadable_entry_is_a_miss_and_is_removed(
        evidence_cache: RedisEvidenceCache, client: redis.Redis, collection: str) -> None:
    name = evidence_key(collection, "k-bad")
    client.set(name, b'{"hits": "not a list"}', ex=60)
    assert evidence_cache.get(collection, "k-bad") is None
    assert not client.exists(name)


def test_drop_collection_removes_its_entries_only(
        evidence_cache: RedisEvidenceCache, collection: str) -> None:
    entry = evidence_entry([hit()], requester_acl=["staff"])
    neighbour = f"{collection}2"  # shares the prefix, is another collection
    for i in range(3):
        evidence_cache.put(collection, f"k{i}", entry)
    evidence_cache.put(neighbour, "k0", entry)
    try:
        assert evidence_cache.drop_collection(collection) == 3
        assert evidence_cache.get(collection, "k0") is None
        assert evidence_cache.get(neighbour, "k0") == entry
    finally:
        evidence_cache.drop_collection(neighbour)
