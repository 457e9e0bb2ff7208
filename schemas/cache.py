"""What the evidence cache stores: the hits of one retrieval, stamped with the ACL and
the document versions they were found under, so a later hit can be re-checked before use.

No I/O here: the cache adapter (:mod:`caches`) writes these as JSON, and the pure check
(:mod:`orchestration.cache_check`) reads them.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class CachedHit(BaseModel):
    """One retrieved chunk, with the ACL labels it carried when it was found.

    ``acl`` travels with the chunk so a cache hit can be re-checked chunk by chunk: a chunk is
    never shown to a requester who could not have retrieved it.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    doc_id: str
    chunk_id: str
    score: float
    text_score: float | None = None  # see Evidence.text_score
    #: See Evidence.question_score: the job's own; the evidence cache keeps none (it is shared
    #: by jobs asking other questions).
    question_score: float | None = None
    source_version: str = ""
    authority_tier: int = 2
    title: str = ""
    text: str
    acl: list[str] = Field(default_factory=list)
    source: str = ""  # the collection it was found in (empty: the job's only collection)


class CachedEvidence(BaseModel):
    """The hits of one retrieval request, as the evidence cache keeps them.

    ``acl_fingerprint`` is the sha256 of the requester's sorted ACL at caching time;
    ``source_versions`` maps each doc id the hits rest on to the version they were read from.
    ``cached_at_s`` is a Unix time in seconds, for logs and the ledger.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    hits: list[CachedHit]
    acl_fingerprint: str
    source_versions: dict[str, str] = Field(default_factory=dict)
    cached_at_s: float = 0.0

    @property
    def doc_ids(self) -> list[str]:
        """Every doc id the entry rests on (hits and stamps), each once, in first-seen order:
        what the caller asks the ledger for current versions of."""
        return list(dict.fromkeys([*(h.doc_id for h in self.hits), *self.source_versions]))
