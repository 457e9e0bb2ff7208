"""Dense, sparse and hybrid search, the same way in every adapter.

Every chunk holds the dense ``text`` and ``title`` vectors and, in collections made since hybrid
search, the sparse ``terms`` vector (:mod:`orchestration.sparse_terms`; Qdrant's IDF modifier
weighs the query terms, so the engine's dot product is a BM25 score).

A search is one batch request. Its candidates are prefetched (``dense``: nearest by text and by
title; ``sparse``: best by terms; ``hybrid``: all three lists). The first query of the batch
ranks them the mode's way (``dense``: nothing more; ``sparse``: by terms; ``hybrid``: the
engine's fusion, RRF or DBSF, of two lists: the vectors' (itself the same fusion of the text
and title lists) and the terms', so each side counts once; fusing the three lists flat gave the
vectors two votes to the terms' one, and measured the same as dense); the other two queries
rescore the candidates on the text and title vectors. So every hit arrives with its exact
cosines, and its ``score`` is the :class:`~vectorstore.fusion.TitleFusion` cosine in every mode:
the thresholds downstream (weak-pass expansion, sufficiency) keep their meaning whatever ranked
the hits. The order is the mode's; ``Hit.rank_score`` holds the mode's own score (BM25, RRF
or DBSF).

A collection without the ``terms`` vector (made before hybrid search) is searched dense, with a
warning once per collection naming the fix: ingest into a new collection.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence

from ragq.schemas.search import SearchMode, SearchRequest
from ragq.vectorstore.base import Hit
from ragq.vectorstore.fusion import ScoredPoint, TitleFusion

logger = logging.getLogger(__name__)

#: Name of the sparse vector of every point (collections made since hybrid search).
TERMS = "terms"
#: RRF's rank constant, the same in both adapters (the engines' defaults differ).
RRF_K = 60

#: How to get sparse vectors into a collection made before them (the engines cannot add one).
MIGRATE = ("ingest into a new collection (RAGQ_COLLECTION / --collection) to get sparse and "
           "hybrid search")


def effective(request: SearchRequest | None, *, collection: str, has_terms: bool,
              warned: set[str]) -> SearchRequest:
    """The request a store can serve: ``dense`` when none was given, when the collection has no
    ``terms`` vector (warned once per collection) or when the query has no terms (all
    stopwords), since a sparse search for nothing finds nothing. ``warned`` is the store's
    record of what it already warned about."""
    if request is None or request.mode is SearchMode.DENSE:
        return request or SearchRequest()
    if not has_terms:
        _warn_once(warned, f"search:{collection}", "collection %r has no sparse 'terms' vector "
                   "(made before hybrid search): searching it dense instead of %s; %s",
                   collection, request.label, MIGRATE)
        return SearchRequest(fusion=request.fusion)
    if not request.terms:
        logger.info("collection %r: query has no index terms, searching dense instead of %s",
                    collection, request.label)
        return SearchRequest(fusion=request.fusion)
    return request


def ranked_hits(
    fusion: TitleFusion, mode: SearchRequest, lists: Sequence[Iterable[ScoredPoint]], top_k: int
) -> list[Hit]:
    """The ``top_k`` hits of a search's batch answer ``lists`` (the ranking list unless
    ``mode`` is dense, then the text and the title rescoring), in the mode's order (dense: by
    the fused cosine), each scored by the fused cosine of its text and title rescoring.

    Raises ``ValueError`` when ``lists`` has not the length ``mode`` asked for.
    """
    ranked: Iterable[ScoredPoint] | None = None
    if mode.mode is SearchMode.DENSE:
        text, title = lists
    else:
        ranked, text, title = lists
    dense = fusion.fuse(text, title, 10**9)
    if ranked is None:
        return [_with_rank(h, h.score) for h in dense[:top_k]]
    by_id = {h.id: h for h in dense}
    hits = []
    for point in ranked:
        found = by_id.get(point.id)
        if found is None:  # only when the engine dropped a candidate from the rescoring
            found = Hit(point.id, -1.0, dict(point.payload))
        hits.append(_with_rank(found, point.score))
        if len(hits) == top_k:
            break
    return hits


def warn_no_terms(collection: str, warned: set[str]) -> None:
    """Say once per collection and store that points written to it get no sparse vector."""
    _warn_once(warned, f"upsert:{collection}", "collection %r has no sparse 'terms' vector "
               "(made before hybrid search): chunks written to it are searchable dense only; %s",
               collection, MIGRATE)


def _with_rank(hit: Hit, rank_score: float) -> Hit:
    return Hit(hit.id, hit.score, hit.payload, hit.text_score, hit.title_score, rank_score)


def _warn_once(warned: set[str], what: str, message: str, *args: object) -> None:
    if what not in warned:
        warned.add(what)
        logger.warning(message, *args)
