"""How wide a search goes."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from ragq.schemas.cache import CachedHit
from ragq.schemas.search import SearchMode, SearchRequest

#: How many hits a search fetches per hit it keeps: the pool :func:`spread_over_documents`
#: picks distinct documents from. Fetching is one engine call either way.
FETCH_FACTOR = 3
#: Chunks of one document a search keeps before other documents get their turn.
PER_DOCUMENT = 1


def search_width(query: str, question: str, *, top_k: int, context_chunks: int) -> int:
    """``top_k`` for a sub-query, widened to the context size when the query is the question
    itself.

    A search for the whole question is the one that alone may have to fill the context (on the
    simple route it is the only search), so it fetches as many chunks as the context holds; a
    part of the question only needs its own best few.
    """
    if query.strip().casefold() == question.strip().casefold():
        return max(top_k, context_chunks)
    return top_k


def fetch_width(top_k: int, search: SearchRequest) -> int:
    """How many hits to ask the engine for, to keep ``top_k`` of them spread over documents:
    :data:`FETCH_FACTOR` times more where the engine's best ``top_k`` do not depend on how many
    it returns (dense, sparse), ``top_k`` itself for ``hybrid``: its fused lists are as deep as
    the search is wide, so a wider search re-ranks its best hits (RRF's ranks, DBSF's
    normalisation), not only adds to them (musique with DBSF: 0.56 -> 0.49 all-gold in
    context when fetched wider)."""
    return top_k if search.mode is SearchMode.HYBRID else top_k * FETCH_FACTOR


def spread_over_documents(hits: Sequence[CachedHit], top_k: int, *,
                          per_document: int = PER_DOCUMENT) -> tuple[CachedHit, ...]:
    """At most ``top_k`` of ``hits`` per source, in the engine's order: first at most
    ``per_document`` chunks of each document, then, while room is left, the other chunks in
    order. A long page cut into many chunks otherwise fills a search with itself (on
    anthropic_docs the 8 best chunks of a question came from three documents or fewer for 15
    of 100 questions) and the second document a question needs never gets a hit; one chunk
    of a document is enough to bring it into the evidence, and the context takes one chunk
    per document first anyway."""
    seen: Counter[tuple[str, str]] = Counter()
    first: list[int] = []
    repeats: list[int] = []
    for i, hit in enumerate(hits):
        (first if seen[hit.source, hit.doc_id] < per_document else repeats).append(i)
        seen[hit.source, hit.doc_id] += 1
    room: Counter[str] = Counter()
    keep: set[int] = set()
    for i in first + repeats:
        if room[hits[i].source] < top_k:
            room[hits[i].source] += 1
            keep.add(i)
    return tuple(hit for i, hit in enumerate(hits) if i in keep)


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine similarity; 0 for a zero vector (some embedders do not return unit vectors)."""
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


def weak_pass(scores: Sequence[float], *, min_top_score: float, min_margin: float
              ) -> str | None:
    """Why a search pass is weak, so rewriting it may pay off; None when it is strong.

    Weak: no hits, a top score below ``min_top_score``, or (when ``min_margin`` > 0) top hits
    too close to tell apart. A strong pass that a sufficiency check still calls insufficient is
    missing something a rewrite of the same need rarely finds; the verifier's follow-ups ask
    for what is missing instead.
    """
    if not scores:
        return "no hits"
    ranked = sorted(scores, reverse=True)
    if ranked[0] < min_top_score:
        return f"top score {ranked[0]:.3f} < {min_top_score:.3f}"
    if min_margin > 0 and len(ranked) > 1 and ranked[0] - ranked[1] < min_margin:
        return f"margin {ranked[0] - ranked[1]:.3f} < {min_margin:.3f}"
    return None
