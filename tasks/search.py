"""Search as a task: in the embedded topology only the vector-owning worker may read the store."""

from __future__ import annotations

from typing import Any

from celery import shared_task

from ragq.orchestration.sparse_terms import query_terms
from ragq.schemas.document import acl_labels
from ragq.schemas.search import SearchRequest, parse_fusion, parse_mode
from ragq.schemas.tasks import Task
from ragq.tasks.runtime import resources, settings
from ragq.vectorstore.base import Hit, SearchFilter


def _hit_record(hit: Hit) -> dict[str, Any]:
    """A hit as a task result: its id, fused cosine score, the mode's rank score, payload."""
    return {"id": hit.id, "score": hit.score, "rank_score": hit.rank_score, **hit.payload}


def acl_filter(acl: list[str] | None) -> SearchFilter:
    """The filter of a search's ACL. Raises ValueError for none, an empty one or a blank label:
    no search runs without an ACL filter (an empty list must never mean "everything")."""
    return SearchFilter(acl=acl_labels(acl or ()))


def search_request(task: Any, query: str, mode: str | None, fusion: str | None) -> SearchRequest:
    """How to rank ``query``: the request's mode and fusion where given, else the settings'.

    Raises ``ValueError`` naming the valid modes (fusions) for an unknown one.
    """
    conf = settings(task)
    return SearchRequest(
        parse_mode(mode, where="search mode") if mode else conf.search_mode,
        parse_fusion(fusion, where="search fusion") if fusion else conf.search_fusion,
        query_terms(query),
    )


@shared_task(name=Task.SEARCH, bind=True)
def search(
    self: Any, collection: str, query: str, top_k: int, acl: list[str] | None = None,
    mode: str | None = None, fusion: str | None = None,
) -> list[dict[str, Any]]:
    """Embed ``query`` and return the ``top_k`` chunks the ACL allows, best first, ranked by
    ``mode`` (dense, sparse, hybrid) and ``fusion`` (rrf, dbsf), or the settings' defaults.
    Raises ValueError without an ACL (:func:`acl_filter`)."""
    res = resources(self)
    request = search_request(self, query, mode, fusion)
    vector = res.embedder.embed([query])[0]
    hits = res.vector_store.search(collection, vector, top_k, acl_filter(acl), request)
    return [_hit_record(h) for h in hits]


@shared_task(name=Task.SEARCH_BATCH, bind=True)
def search_batch(
    self: Any, collection: str, queries: list[str], top_k: int, acl: list[str] | None = None,
    mode: str | None = None, fusion: str | None = None,
) -> list[list[dict[str, Any]]]:
    """Like :func:`search` for many queries at once: one embedding pass, one task round trip."""
    res = resources(self)
    requests = [search_request(self, q, mode, fusion) for q in queries]
    vectors = res.embedder.embed(queries)
    flt = acl_filter(acl)
    return [
        [_hit_record(h) for h in res.vector_store.search(collection, v, top_k, flt, r)]
        for v, r in zip(vectors, requests, strict=True)
    ]


@shared_task(name=Task.COUNT, bind=True)
def count(self: Any, collection: str, doc_id: str | None = None,
          source_version: str | None = None) -> int:
    """Points in ``collection``, optionally of one document and/or one source version."""
    flt = SearchFilter(
        doc_ids=(doc_id,) if doc_id else None,
        source_versions=(source_version,) if source_version else None,
    )
    return resources(self).vector_store.count(collection, flt)
