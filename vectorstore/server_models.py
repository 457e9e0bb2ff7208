"""What ragq's collections, filters and searches look like in qdrant-client's models.

Kept apart from the adapter so :mod:`vectorstore.server` only sequences calls: the shapes here
are the ones the embedded store builds in qdrant-edge's types (:mod:`vectorstore.edge_shards`,
:mod:`vectorstore.edge`), and must mean the same.
"""

from __future__ import annotations

from qdrant_client import models

from ragq.schemas.metadata import FieldType
from ragq.schemas.search import SearchFusion, SearchMode, SearchRequest, SparseTerms
from ragq.vectorstore.filters import FilterPlan, FilterTypes, render_plan
from ragq.vectorstore.fusion import TEXT, TITLE, VECTOR_NAMES, ScoredPoint
from ragq.vectorstore.modes import RRF_K, TERMS


def client_filter(plan: FilterPlan) -> models.Filter | None:
    """Render the shared filter semantics in qdrant-client's models; None when unrestricted."""
    return None if plan.is_empty else render_filter(plan)


CLIENT_TYPES = FilterTypes(filter=models.Filter, field_condition=models.FieldCondition,
                           match_any=models.MatchAny, number_range=models.Range,
                           date_range=models.DatetimeRange)


def render_filter(plan: FilterPlan) -> models.Filter:
    """Render ``plan`` (even an empty one) as a qdrant-client filter."""
    filter_: models.Filter = render_plan(plan, CLIENT_TYPES)
    return filter_


#: The server's payload index for each declared field type.
SERVER_INDEX: dict[FieldType, models.PayloadSchemaType] = {
    FieldType.KEYWORD: models.PayloadSchemaType.KEYWORD,
    FieldType.ENUM: models.PayloadSchemaType.KEYWORD,
    FieldType.NUMBER: models.PayloadSchemaType.FLOAT,
    FieldType.DATE: models.PayloadSchemaType.DATETIME,
}


def vectors_config(dim: int) -> dict[str, models.VectorParams]:
    """The named vectors of a ragq collection: ``text`` and ``title``, cosine, ``dim`` each."""
    params = models.VectorParams(size=dim, distance=models.Distance.COSINE)
    return dict.fromkeys(VECTOR_NAMES, params)


def sparse_config() -> dict[str, models.SparseVectorParams]:
    """The sparse vector of a ragq collection: ``terms``, weighted by the engine's IDF."""
    return {TERMS: models.SparseVectorParams(modifier=models.Modifier.IDF)}


def has_terms(sparse: object) -> bool:
    """Whether a collection's sparse vectors config holds ``terms`` (made since hybrid)."""
    return isinstance(sparse, dict) and TERMS in sparse


def sparse_vector(terms: SparseTerms) -> models.SparseVector:
    """``terms`` in qdrant-client's model."""
    return models.SparseVector(indices=list(terms.indices), values=list(terms.values))


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


def search_batch(
    query: list[float], mode: SearchRequest, candidates: int, top_k: int,
    where: models.Filter | None, question: list[float] | None = None,
) -> list[models.QueryRequest]:
    """The batch of one search (:mod:`vectorstore.modes`): for sparse and hybrid first the
    ranking query, then the text query and the title query, each rescoring the union of the
    prefetched candidates, and last (when ``question`` is given) the question's rescoring of
    that union on the text vector (:mod:`vectorstore.question`), every stage under ``where``."""
    nearest = [
        models.Prefetch(query=query, using=name, limit=candidates, filter=where)
        for name in (TEXT, TITLE)
    ]
    ranking: list[models.QueryRequest] = []
    if mode.mode is not SearchMode.DENSE:
        assert mode.terms is not None  # effective() falls back to dense without terms
        terms = sparse_vector(mode.terms)
        by_terms = models.Prefetch(query=terms, using=TERMS, limit=candidates, filter=where)
        if mode.mode is SearchMode.SPARSE:
            nearest = [by_terms]
            ranking = [models.QueryRequest(query=terms, using=TERMS, limit=top_k, filter=where,
                                           with_payload=True)]
        else:
            fused = (models.RrfQuery(rrf=models.Rrf(k=RRF_K))
                     if mode.fusion is SearchFusion.RRF
                     else models.FusionQuery(fusion=models.Fusion.DBSF))
            by_vectors = models.Prefetch(query=fused, prefetch=nearest, limit=candidates,
                                         filter=where)
            ranking = [models.QueryRequest(query=fused, prefetch=[by_vectors, by_terms],
                                           limit=top_k, filter=where, with_payload=True)]
            nearest = [*nearest, by_terms]
    rescoring = [(query, TEXT, True), (query, TITLE, True)]
    if question is not None:
        rescoring.append((question, TEXT, False))  # its scores only: the payloads came above
    return [*ranking, *(
        models.QueryRequest(
            query=vector, using=name, prefetch=nearest, limit=len(nearest) * candidates,
            filter=where, with_payload=payload,
        )
        for vector, name, payload in rescoring
    )]


def scored(response: models.QueryResponse) -> list[ScoredPoint]:
    """The points of one query's response, for :meth:`~vectorstore.fusion.TitleFusion.fuse`."""
    return [ScoredPoint(str(p.id), float(p.score), p.payload or {}) for p in response.points]
