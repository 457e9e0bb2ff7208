"""What ragq's collections, filters and searches look like in qdrant-client's models.

Kept apart from the adapter so :mod:`vectorstore.server` only sequences calls: the shapes here
are the ones the embedded store builds in qdrant-edge's types (:mod:`vectorstore.edge_shards`,
:mod:`vectorstore.edge`), and must mean the same.
"""

from __future__ import annotations

from qdrant_client import models

from ragq.vectorstore.filters import FilterPlan
from ragq.vectorstore.fusion import TEXT, TITLE, VECTOR_NAMES, ScoredPoint


def client_filter(plan: FilterPlan) -> models.Filter | None:
    """Render the shared filter semantics in qdrant-client's models; None when unrestricted."""
    return None if plan.is_empty else render_filter(plan)


def render_filter(plan: FilterPlan) -> models.Filter:
    """Render ``plan`` (even an empty one) as a qdrant-client filter."""

    def any_of(key: str, values: tuple[str, ...]) -> models.FieldCondition:
        return models.FieldCondition(key=key, match=models.MatchAny(any=list(values)))

    return models.Filter(
        must=[any_of(c.key, c.values) for c in plan.must] or None,
        must_not=[any_of(c.key, c.values) for c in plan.must_not] or None,
    )


def vectors_config(dim: int) -> dict[str, models.VectorParams]:
    """The named vectors of a ragq collection: ``text`` and ``title``, cosine, ``dim`` each."""
    params = models.VectorParams(size=dim, distance=models.Distance.COSINE)
    return dict.fromkeys(VECTOR_NAMES, params)


def layout_dim(params: object) -> int | None:
    """The dimension of a collection whose vectors are as :func:`vectors_config` makes them;
    None for any other layout (one unnamed vector, other names, another distance or sizes)."""
    if not isinstance(params, dict) or sorted(params) != sorted(VECTOR_NAMES):
        return None
    sizes = {
        p.size for p in params.values()
        if isinstance(p, models.VectorParams) and p.distance == models.Distance.COSINE
    }
    return sizes.pop() if len(sizes) == 1 and len(params) == len(VECTOR_NAMES) else None


def fused_search(
    query: list[float], candidates: int, where: models.Filter | None
) -> list[models.QueryRequest]:
    """The batch of one search: the text query then the title query, each rescoring the union
    of the ``candidates`` nearest points by text and by title, every stage under ``where``."""
    nearest = [
        models.Prefetch(query=query, using=name, limit=candidates, filter=where)
        for name in (TEXT, TITLE)
    ]
    return [
        models.QueryRequest(
            query=query, using=name, prefetch=nearest, limit=2 * candidates, filter=where,
            with_payload=True,
        )
        for name in (TEXT, TITLE)
    ]


def scored(response: models.QueryResponse) -> list[ScoredPoint]:
    """The points of one query's response, for :meth:`~vectorstore.fusion.TitleFusion.fuse`."""
    return [ScoredPoint(str(p.id), float(p.score), p.payload or {}) for p in response.points]
