"""Whether a cached evidence entry may be reused for this requester, now. Pure: the
caller reads the entry from the cache and the current versions from the ledger, and deletes the
entry when the answer is no.

A hit is reused only when all of these hold, checked in this order:

1. it has hits (an empty result is the likeliest to be outdated by the next ingest);
2. it was cached for exactly the requester's ACL (the fingerprints are equal);
3. every chunk's own ACL shares a label with the requester's — defence in depth, so a chunk is
   never shown to someone who could not retrieve it, even if fingerprints collided or an entry
   was written by a buggy caller;
4. every document it rests on still exists, at the version the entry was built from.

The entry is shared by jobs asking different questions, so it keeps no hit's ``question_score``
(the cosine of the job that searched's question): :func:`shared_hits` drops it on the way in
and again on the way out, and a job served from the cache embeds its texts as before.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import NamedTuple

from ragq.schemas.cache import CachedEvidence, CachedHit

__all__ = ["CacheVerdict", "acl_fingerprint", "evidence_entry", "shared_hits", "usable"]


class CacheVerdict(NamedTuple):
    """The answer of :func:`usable`; unpacks as ``(ok, reason)``."""

    ok: bool
    reason: str


def acl_fingerprint(acl: Iterable[str]) -> str:
    """sha256 hex of the sorted, de-duplicated labels: equal for the same set in any order."""
    material = json.dumps(sorted(set(acl)), ensure_ascii=False)
    return hashlib.sha256(material.encode()).hexdigest()


def evidence_entry(
    hits: Sequence[CachedHit], *, requester_acl: Iterable[str], now_s: float | None = None
) -> CachedEvidence:
    """The cache entry of a fresh retrieval: its hits, stamped with the requester's ACL
    fingerprint and the version of every document the hits came from."""
    return CachedEvidence(
        hits=list(shared_hits(hits)),
        acl_fingerprint=acl_fingerprint(requester_acl),
        source_versions={h.doc_id: h.source_version for h in hits},
        cached_at_s=time.time() if now_s is None else now_s,
    )


def shared_hits(hits: Iterable[CachedHit]) -> tuple[CachedHit, ...]:
    """``hits`` without their ``question_score``: another job's question's, meaningless (and
    wrong) for a job served from the cache."""
    return tuple(h if h.question_score is None else h.model_copy(update={"question_score": None})
                 for h in hits)


def usable(
    entry: CachedEvidence, *, requester_acl: Iterable[str], current_versions: Mapping[str, str]
) -> CacheVerdict:
    """Whether ``entry`` may be served to a requester holding ``requester_acl``, given the
    ledger's ``current_versions`` ({doc_id: source_version} of the entry's documents; a doc
    missing from it was deleted). The reason starts with ``empty``, ``acl``, ``missing doc`` or
    ``stale`` when the answer is no, and is ``"usable"`` otherwise."""
    labels = set(requester_acl)
    if not entry.hits:
        return CacheVerdict(False, "empty: no hits to reuse")
    if entry.acl_fingerprint != acl_fingerprint(labels):
        return CacheVerdict(False, "acl: cached for another ACL")
    for hit in entry.hits:
        if not labels.intersection(hit.acl):
            return CacheVerdict(
                False, f"acl: chunk {hit.chunk_id} of doc {hit.doc_id} is not visible to the "
                "requester")
    stamped = {**entry.source_versions}
    for hit in entry.hits:
        stamped.setdefault(hit.doc_id, hit.source_version)
    for hit in entry.hits:  # a hit read from another version than its entry's stamp is stale too
        if hit.source_version != stamped[hit.doc_id]:
            return CacheVerdict(False, f"stale: chunk {hit.chunk_id} of doc {hit.doc_id} is "
                                f"{hit.source_version}, the entry says {stamped[hit.doc_id]}")
    for doc_id, version in stamped.items():
        current = current_versions.get(doc_id)
        if current is None:
            return CacheVerdict(False, f"missing doc {doc_id}")
        if current != version:
            return CacheVerdict(False, f"stale: doc {doc_id} {version} -> {current}")
    return CacheVerdict(True, "usable")
