"""The embedded vector store: one qdrant-edge shard per collection, owned by one process.

Threading, as measured on qdrant-edge 0.9 (see tests/vectorstore/test_edge.py): the engine
releases the GIL while it searches and is safe to query from many threads while another thread
writes, so reads take no lock. Writers of a collection take its lock, so ``delete_stale`` counts
and deletes the same points; a gate makes ``close`` wait for in-flight calls instead of closing
shards under them.

A dense search is one batch of two engine queries that share two prefetches (the nearest points
by text and by title); each query rescores that union on one vector, so every candidate arrives
with both exact scores for :class:`~vectorstore.fusion.TitleFusion` to fuse. Sparse and hybrid
searches add the ranking query first (:mod:`vectorstore.modes`); a search given a question adds
its rescoring last (:mod:`vectorstore.question`).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import cast

import qdrant_edge as qe

from ragq.errors import CollectionNotFoundError
from ragq.schemas.metadata import FieldType
from ragq.schemas.search import SearchFusion, SearchMode, SearchRequest
from ragq.vectorstore.base import Hit, SearchFilter, VectorPoint
from ragq.vectorstore.checks import as_vector, check_collection_name, check_top_k, point_vectors
from ragq.vectorstore.edge_errors import translate_edge_errors
from ragq.vectorstore.edge_shards import EDGE_INDEX, EdgeCollection, ShardDirectory, edge_filter
from ragq.vectorstore.errors import VectorDimensionError
from ragq.vectorstore.filters import meta_key, plan_search, plan_stale
from ragq.vectorstore.fusion import TEXT, TITLE, ScoredPoint, TitleFusion
from ragq.vectorstore.locking import RootLock, UsageGate
from ragq.vectorstore.modes import RRF_K, TERMS, effective, ranked_hits, warn_no_terms
from ragq.vectorstore.question import question_query, with_question_scores


class EdgeVectorStore:
    """A :class:`~vectorstore.base.VectorStore` on disk under ``root``, inside this process.

    Construction takes ownership of ``root`` and raises ``EdgeStoreLockedError`` (a
    ``VectorStoreLockedError``) naming the owning pid when another process holds it. Shards open
    lazily on first use and stay open until :meth:`close`. Writes are durable on return.
    ``fusion`` says how a search combines text and title similarity.
    """

    def __init__(self, root: Path, fusion: TitleFusion | None = None):
        self._root = Path(root)
        self._fusion = fusion or TitleFusion()
        self._root.mkdir(parents=True, exist_ok=True)
        self._owner = RootLock(self._root)
        self._owner.acquire()
        self._dir = ShardDirectory(self._root)
        self._gate = UsageGate()
        self._warned: set[str] = set()  # what the modes fallback warned about, once each
        self._open_lock = threading.Lock()
        self._open: dict[str, EdgeCollection] = {}

    def __enter__(self) -> EdgeVectorStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def ensure_collection(self, collection: str, dim: int) -> None:
        """Create the collection if missing; raise ``VectorDimensionError`` if its dim differs."""
        with self._gate.use():
            name = check_collection_name(collection)
            with self._open_lock:
                found = self._open.get(name) or self._dir.open(name)
                if found is None:
                    found = self._dir.create(name, dim)
                self._open[name] = found
            if found.dim != dim:
                raise VectorDimensionError(name, expected=found.dim, got=dim)

    def index_fields(self, collection: str, fields: Mapping[str, FieldType]) -> None:
        """Index the declared metadata fields (``meta.<name>``) by type; idempotent."""
        with self._gate.use():
            coll = self._require(collection)
            with coll.write_lock, translate_edge_errors(coll.name):
                for name, kind in sorted(fields.items()):
                    coll.shard.update(qe.UpdateOperation.create_field_index(
                        meta_key(name), EDGE_INDEX[kind]))
                coll.shard.flush()

    def upsert(self, collection: str, points: Sequence[VectorPoint]) -> None:
        """Insert or overwrite ``points`` by id; raise ``CollectionNotFoundError`` if missing."""
        with self._gate.use():
            coll = self._require(collection)
            if not points:
                return
            if not coll.has_terms and any(p.terms for p in points):
                warn_no_terms(coll.name, self._warned)
            with translate_edge_errors(coll.name):  # ids and payloads convert here
                op = qe.UpdateOperation.upsert_points(
                    [qe.Point(p.id, _vectors(coll, p), p.payload) for p in points]
                )
            with coll.write_lock, translate_edge_errors(coll.name):
                coll.shard.update(op)
                coll.shard.flush()

    def delete_stale(self, collection: str, doc_id: str, keep_source_version: str) -> int:
        """Delete the chunks of ``doc_id`` of another source_version; return how many.

        Returns 0 when the collection does not exist.
        """
        with self._gate.use():
            coll = self._get(collection)
            if coll is None:
                return 0
            flt = edge_filter(plan_stale(doc_id, keep_source_version))
            with coll.write_lock, translate_edge_errors(coll.name):
                stale = coll.shard.count(qe.CountRequest(exact=True, filter=flt))
                if stale:
                    coll.shard.update(qe.UpdateOperation.delete_points_by_filter(flt))
                    coll.shard.flush()
            return stale

    def search(
        self, collection: str, vector: Sequence[float], top_k: int, flt: SearchFilter | None = None,
        request: SearchRequest | None = None, question: Sequence[float] | None = None,
    ) -> list[Hit]:
        """The ``top_k`` best chunks passing ``flt``, best first as ``request`` ranks them
        (None: dense, by fused text/title score); see :mod:`vectorstore.modes`. ``question``
        scores each hit's text vector too (``question_score``, see :mod:`vectorstore.question`).

        Raises ``CollectionNotFoundError`` for an unknown collection and ``VectorDimensionError``
        for a vector of the wrong length.
        """
        with self._gate.use():
            coll = self._require(collection)
            query = as_vector(coll.name, vector, coll.dim)
            plan = plan_search(flt)
            if plan.matches_nothing:
                return []
            where = None if plan.is_empty else edge_filter(plan)
            limit = self._fusion.candidates(check_top_k(top_k))
            mode = effective(request, collection=coll.name, has_terms=coll.has_terms,
                             warned=self._warned)
            asked = question_query(coll.name, query, question, coll.dim)
            batch = _batch(query, mode, limit, top_k, where, asked)
            with translate_edge_errors(coll.name):
                lists = [_scored(x) for x in coll.shard.query_batch(batch)]
                by_question = lists.pop() if asked is not None else None
                lists[-1] = _with_payloads(coll.shard, lists[-1], lists[-2])
            hits = ranked_hits(self._fusion, mode, lists, top_k)
            return with_question_scores(hits, question, by_question)

    def count(self, collection: str, flt: SearchFilter | None = None) -> int:
        """Exact number of points passing ``flt``; 0 when the collection does not exist."""
        with self._gate.use():
            coll = self._get(collection)
            plan = plan_search(flt)
            if coll is None or plan.matches_nothing:
                return 0
            request = qe.CountRequest(
                exact=True, filter=None if plan.is_empty else edge_filter(plan)
            )
            with translate_edge_errors(coll.name):
                return coll.shard.count(request)

    def collections(self) -> list[str]:
        """Names of the existing collections, sorted."""
        with self._gate.use():
            return self._dir.names()

    def close(self) -> None:
        """Wait for in-flight calls, flush and close every shard, release ownership. Idempotent."""
        if not self._gate.close():
            return
        try:
            with self._open_lock:
                for coll in self._open.values():
                    with translate_edge_errors(coll.name):
                        coll.shard.flush()
                        coll.shard.close()
                self._open.clear()
        finally:
            self._owner.release()

    def _require(self, collection: str) -> EdgeCollection:
        coll = self._get(collection)
        if coll is None:
            # Users read this in a failed job's result: it names no server path and no other
            # collection (another tenant's, maybe).
            raise CollectionNotFoundError(
                f"collection {collection!r} does not exist; ingest into it first",
                collection=collection,
            )
        return coll

    def _get(self, collection: str) -> EdgeCollection | None:
        """The open collection, opening its shard on first use; None if it does not exist."""
        found = self._open.get(collection)
        if found is not None:
            return found
        name = check_collection_name(collection)
        with self._open_lock:
            found = self._open.get(name) or self._dir.open(name)
            if found is not None:
                self._open[name] = found
            return found


def _vectors(coll: EdgeCollection, point: VectorPoint) -> dict[str, qe.NamedVector]:
    text, title = point_vectors(coll.name, point, coll.dim)
    vectors: dict[str, qe.NamedVector] = {TEXT: text, TITLE: title}
    if coll.has_terms and point.terms:
        vectors[TERMS] = qe.SparseVector(list(point.terms.indices), list(point.terms.values))
    return vectors


def _batch(query: list[float], mode: SearchRequest, limit: int, top_k: int,
           where: qe.Filter | None, question: list[float] | None = None
           ) -> qe.QueryBatchRequest:
    """The batch of one search: for sparse and hybrid first the ranking query, then the text
    and the title query, each rescoring the union of the prefetched candidates, and last (when
    ``question`` is given) the question's rescoring of the same union on the text vector."""
    nearest = [qe.Prefetch(limit=limit, query=qe.Query.Nearest(query, using=name), filter=where)
               for name in (TEXT, TITLE)]
    ranking: list[qe.QueryRequest] = []
    if mode.mode is not SearchMode.DENSE:
        assert mode.terms is not None  # effective() falls back to dense without terms
        terms = qe.Query.Nearest(
            qe.SparseVector(list(mode.terms.indices), list(mode.terms.values)), using=TERMS)
        by_terms = qe.Prefetch(limit=limit, query=terms, filter=where)
        # qdrant-edge-py's stub declares Fusion.Rrf and Fusion.Dbsf as classes nested in Fusion
        # but not subclasses of it, so a query parameter typed Fusion refuses them; the engine
        # takes them (tests/vectorstore/test_search_modes.py runs both fusions on it).
        fused = cast(qe.Fusion, qe.Fusion.Rrf(k=RRF_K) if mode.fusion is SearchFusion.RRF
                     else qe.Fusion.Dbsf())
        by_vectors = qe.Prefetch(limit=limit, query=fused, prefetches=nearest, filter=where)
        sparse = mode.mode is SearchMode.SPARSE
        ranking = [qe.QueryRequest(
            limit=top_k, query=terms if sparse else fused,
            prefetches=None if sparse else [by_vectors, by_terms], filter=where,
            with_payload=True)]
        nearest = [by_terms] if sparse else [*nearest, by_terms]
    # The title and the question rescore the same union as the text: their scores only, the
    # payloads come with the text's (converting them was a third of a search's time).
    rescoring = [(query, TEXT, True), (query, TITLE, False)]
    if question is not None:
        rescoring.append((question, TEXT, False))
    return qe.QueryBatchRequest([*ranking, *(
        qe.QueryRequest(limit=len(nearest) * limit, query=qe.Query.Nearest(vector, using=name),
                        prefetches=nearest, filter=where, with_payload=payload)
        for vector, name, payload in rescoring)])


def _scored(points: list[qe.ScoredPoint]) -> list[ScoredPoint]:
    return [ScoredPoint(str(p.id), float(p.score), p.payload or {}) for p in points]


def _with_payloads(shard: qe.EdgeShard, title: list[ScoredPoint], text: list[ScoredPoint]
                   ) -> list[ScoredPoint]:
    """The title rescoring (asked without payloads) with the payload of each point the text
    rescoring did not return, read by id: a point with a title vector and no text vector,
    which ragq never writes but a store written by hand may hold."""
    known = {p.id for p in text}
    missing: list[qe.PointId] = [p.id for p in title if p.id not in known]
    if not missing:
        return title
    read = {str(r.id): r.payload or {} for r in shard.retrieve(missing, True, False)}
    return [ScoredPoint(p.id, p.score, read[p.id]) if p.id in read else p for p in title]
