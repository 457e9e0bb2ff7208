"""The vector store on a Qdrant server (or qdrant-client's in-process ``:memory:`` mode, for tests).

Same semantics as the embedded store: cosine distance, keyword payload indexes on the filtered
fields, writes acknowledged only once applied (``wait=True``), the shared filter meaning of
:mod:`vectorstore.filters`, the same named ``text`` and ``title`` vectors and the same fused
search (one batch request: two queries sharing the nearest-by-text and nearest-by-title
prefetches, each rescoring their union on one vector; sparse and hybrid add a ranking query, see
:mod:`vectorstore.modes`, and a question its own rescoring, see :mod:`vectorstore.question`).
Collection dimensions are cached after the first lookup, so a search costs one request. Qdrant
cannot add a sparse vector to an existing collection: one made before hybrid search stays
dense-only (searched dense, with a warning) until ingested anew.
"""

from __future__ import annotations

import contextlib
import math
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from qdrant_client import QdrantClient, models

from ragq.errors import CollectionNotFoundError, RetrievalError
from ragq.schemas.metadata import FieldType
from ragq.schemas.search import SearchRequest
from ragq.vectorstore.base import Hit, SearchFilter, VectorPoint
from ragq.vectorstore.checks import as_vector, check_collection_name, check_top_k, point_vectors
from ragq.vectorstore.errors import CollectionLayoutError, VectorDimensionError
from ragq.vectorstore.filters import KEYWORD_FIELDS, meta_key, plan_search, plan_stale
from ragq.vectorstore.fusion import TEXT, TITLE, VECTOR_NAMES, TitleFusion
from ragq.vectorstore.locking import UsageGate
from ragq.vectorstore.modes import TERMS, effective, ranked_hits, warn_no_terms
from ragq.vectorstore.question import question_query, with_question_scores
from ragq.vectorstore.server_errors import translate_server_errors
from ragq.vectorstore.server_models import (
    SERVER_INDEX,
    client_filter,
    has_terms,
    layout_dim,
    render_filter,
    scored,
    search_batch,
    sparse_config,
    sparse_vector,
    vectors_config,
)

T = TypeVar("T")
MEMORY = ":memory:"


class QdrantServerStore:
    """A :class:`~vectorstore.base.VectorStore` on the Qdrant server at ``url``.

    ``url=":memory:"`` runs qdrant-client's in-process mode, whose calls are serialised here
    because that mode is not thread-safe (a server is). ``timeout_s`` bounds each request.
    ``fusion`` says how a search combines text and title similarity.
    """

    def __init__(
        self, url: str, api_key: str | None = None, timeout_s: float = 30,
        fusion: TitleFusion | None = None,
    ):
        self._url = url
        self._fusion = fusion or TitleFusion()
        self._local = url == MEMORY
        self._serial: contextlib.AbstractContextManager[Any] = (
            threading.Lock() if self._local else contextlib.nullcontext()
        )
        self._gate = UsageGate()
        self._warned: set[str] = set()  # what the modes fallback warned about, once each
        self._dims: dict[str, int] = {}
        self._terms: dict[str, bool] = {}
        with translate_server_errors(None, url):
            self._client = (
                QdrantClient(location=MEMORY)
                if self._local
                else QdrantClient(url=url, api_key=api_key, timeout=math.ceil(timeout_s))
            )

    def __enter__(self) -> QdrantServerStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def ensure_collection(self, collection: str, dim: int) -> None:
        """Create the collection if missing; raise ``VectorDimensionError`` if its dim differs."""
        name = check_collection_name(collection)
        found = self._dim(name)
        if found is None:
            found = self._create(name, dim)
        if found != dim:
            raise VectorDimensionError(name, expected=found, got=dim)

    def index_fields(self, collection: str, fields: Mapping[str, FieldType]) -> None:
        """Index the declared metadata fields (``meta.<name>``) by type; idempotent (Qdrant
        accepts an index made again). The in-process mode has no payload indexes."""
        self._require(collection)
        if self._local:
            return
        for name, kind in sorted(fields.items()):
            self._call(collection, self._client.create_payload_index, collection,
                       field_name=meta_key(name), field_schema=SERVER_INDEX[kind], wait=True)

    def upsert(self, collection: str, points: Sequence[VectorPoint]) -> None:
        """Insert or overwrite ``points`` by id; raise ``CollectionNotFoundError`` if missing."""
        dim = self._require(collection)
        with_terms = self._terms.get(collection, False)
        if not with_terms and any(p.terms for p in points):
            warn_no_terms(collection, self._warned)
        structs = []
        for p in points:
            text, title = point_vectors(collection, p, dim)
            vectors: dict[str, Any] = {TEXT: text, TITLE: title}
            if with_terms and p.terms:
                vectors[TERMS] = sparse_vector(p.terms)
            structs.append(models.PointStruct(id=p.id, vector=vectors, payload=p.payload))
        if structs:
            self._call(collection, self._client.upsert, collection, points=structs, wait=True)

    def delete_stale(self, collection: str, doc_id: str, keep_source_version: str) -> int:
        """Delete the chunks of ``doc_id`` of another source_version; return how many.

        The count is taken just before the delete; 0 when the collection does not exist.
        """
        if self._dim(check_collection_name(collection)) is None:
            return 0
        flt = render_filter(plan_stale(doc_id, keep_source_version))
        stale = self._count(collection, flt)
        if stale:
            selector = models.FilterSelector(filter=flt)
            self._call(collection, self._client.delete, collection, selector, wait=True)
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
        dim = self._require(collection)
        query = as_vector(collection, vector, dim)
        plan = plan_search(flt)
        if plan.matches_nothing:
            return []
        mode = effective(request, collection=collection,
                         has_terms=self._terms.get(collection, False), warned=self._warned)
        asked = question_query(collection, query, question, dim)
        requests = search_batch(query, mode, self._fusion.candidates(check_top_k(top_k)), top_k,
                                client_filter(plan), asked)
        lists = [scored(x) for x in self._call(
            collection, self._client.query_batch_points, collection, requests=requests)]
        by_question = lists.pop() if asked is not None else None
        hits = ranked_hits(self._fusion, mode, lists, top_k)
        return with_question_scores(hits, question, by_question)

    def count(self, collection: str, flt: SearchFilter | None = None) -> int:
        """Exact number of points passing ``flt``; 0 when the collection does not exist."""
        plan = plan_search(flt)
        if self._dim(check_collection_name(collection)) is None or plan.matches_nothing:
            return 0
        return self._count(collection, client_filter(plan))

    def collections(self) -> list[str]:
        """Names of the existing collections, sorted."""
        response = self._call(None, self._client.get_collections)
        return sorted(c.name for c in response.collections)

    def close(self) -> None:
        """Wait for in-flight calls and close the connection pool. Idempotent."""
        if self._gate.close():
            with translate_server_errors(None, self._url):
                self._client.close()

    def _call(self, collection: str | None, fn: Callable[..., T], /, *args: Any, **kw: Any) -> T:
        """Every client call goes through here: gate, serialisation, error translation."""
        try:
            with self._gate.use(), self._serial, translate_server_errors(collection, self._url):
                return fn(*args, **kw)
        except CollectionNotFoundError:
            self._dims.pop(collection or "", None)  # deleted behind our back: forget its dim
            self._terms.pop(collection or "", None)
            raise

    def _count(self, collection: str, flt: models.Filter | None) -> int:
        result = self._call(collection, self._client.count, collection, flt, exact=True)
        return int(result.count)

    def _require(self, collection: str) -> int:
        dim = self._dim(check_collection_name(collection))
        if dim is None:
            raise CollectionNotFoundError(
                f"collection {collection!r} does not exist on Qdrant at {self._url}; "
                "ingest into it first",
                collection=collection,
            )
        return dim

    def _dim(self, name: str) -> int | None:
        """The vector size of ``name`` (cached once known); None if the collection is missing."""
        if name in self._dims:
            return self._dims[name]
        try:
            info = self._call(name, self._client.get_collection, name)
        except CollectionNotFoundError:
            return None
        params = info.config.params.vectors
        dim = layout_dim(params)
        if dim is None:
            raise CollectionLayoutError(
                f"collection {name!r} on {self._url} was not created by this version of ragq "
                f"(it needs cosine vectors named {list(VECTOR_NAMES)} of one size, found "
                f"{params!r}): ingest into another collection name",
                collection=name,
            )
        self._terms[name] = has_terms(info.config.params.sparse_vectors)
        self._dims[name] = dim
        return dim

    def _create(self, name: str, dim: int) -> int:
        """Create ``name`` with its payload indexes; tolerate losing a creation race."""
        try:
            config = vectors_config(dim)
            self._call(name, self._client.create_collection, name, vectors_config=config,
                       sparse_vectors_config=sparse_config())
        except RetrievalError:
            found = self._dim(name)
            if found is None:
                raise
            return found
        if not self._local:  # the in-process mode ignores payload indexes (and warns)
            for key in KEYWORD_FIELDS:
                self._call(
                    name,
                    self._client.create_payload_index,
                    name,
                    field_name=key,
                    field_schema=models.PayloadSchemaType.KEYWORD,
                    wait=True,
                )
        self._terms[name] = True
        self._dims[name] = dim
        return dim

