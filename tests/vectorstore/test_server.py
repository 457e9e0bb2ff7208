"""What only the Qdrant server adapter promises, checked on the wire against a loopback HTTP
server speaking Qdrant's REST shapes: acknowledged writes, keyword indexes, filters, the API key,
and every qdrant-client error translated into ours."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import replace

import grpc
import httpx
import pytest
from qdrant_client import models
from qdrant_client.common.client_exceptions import ResourceExhaustedResponse
from qdrant_client.http.exceptions import ResponseHandlingException, UnexpectedResponse

from ragq.errors import CollectionNotFoundError, RetrievalError
from ragq.orchestration.sparse_terms import query_terms
from ragq.schemas.search import SearchFusion, SearchMode, SearchRequest
from ragq.vectorstore import (
    CollectionLayoutError,
    QdrantServerStore,
    SearchFilter,
    VectorStoreUnavailableError,
)
from ragq.vectorstore.server_errors import server_error
from tests.fakes import LoopbackServer, Reply, Request
from tests.vectorstore.points import DIM, axis, point

NAME = "docs"
BASE = f"/collections/{NAME}"
DONE = {"operation_id": 1, "status": "completed"}


def ok(result: object) -> Reply:
    return Reply(200, {"result": result, "status": "ok", "time": 0.001})


def qdrant_error(status: int, message: str, **headers: str) -> Reply:
    return Reply(status, {"status": {"error": message}, "time": 0.0}, headers)


class FakeQdrant(LoopbackServer):
    """Just enough of Qdrant's REST API for one collection that does not exist yet."""

    def __init__(self) -> None:
        super().__init__()
        self.route("GET", "/", lambda r: Reply(200, {"title": "qdrant", "version": "1.20.0"}))
        self.route("GET", BASE, lambda r: qdrant_error(404, f"Collection `{NAME}` doesn't exist!"))
        self.route("PUT", BASE, lambda r: ok(True))
        self.route("PUT", f"{BASE}/index", lambda r: ok(DONE))
        self.route("PUT", f"{BASE}/points", lambda r: ok(DONE))
        self.route("POST", f"{BASE}/points/delete", lambda r: ok(DONE))
        self.route("POST", f"{BASE}/points/count", lambda r: ok({"count": 2}))
        self.route("GET", "/collections", lambda r: ok({"collections": [{"name": NAME}]}))
        hit = {
            "id": point("a", 0, axis(0)).id,
            "version": 1,
            "score": 0.9,
            "payload": point("a", 0, axis(0)).payload,
        }
        # a search is one batch: the text query, then the title query, each over both prefetches
        text_hit, title_hit = {**hit, "score": 0.9}, {**hit, "score": 0.7}
        self.route(
            "POST", f"{BASE}/points/query/batch",
            lambda r: ok([{"points": [text_hit]}, {"points": [title_hit]}]),
        )

    def sent(self, method: str, path: str) -> list[Request]:
        return [r for r in self.requests if (r.method, r.path) == (method, path)]


@pytest.fixture
def qdrant() -> Iterator[FakeQdrant]:
    with FakeQdrant() as server:
        yield server


def open_store(qdrant: FakeQdrant) -> QdrantServerStore:
    """A store on the fake, once qdrant-client's background version probe has been answered
    (a probe outliving its test would warn from whichever test is running then)."""
    with pytest.warns(UserWarning, match="insecure"):  # an API key over plain HTTP: say so
        opened = QdrantServerStore(qdrant.base_url, api_key="secret-key", timeout_s=1)
    deadline = time.monotonic() + 5
    while not qdrant.count("GET", "/") and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.05)
    return opened


@pytest.fixture
def store(qdrant: FakeQdrant) -> Iterator[QdrantServerStore]:
    opened = open_store(qdrant)
    yield opened
    opened.close()


def test_a_new_collection_is_cosine_with_keyword_indexes_and_writes_wait(qdrant, store):
    store.ensure_collection(NAME, DIM)
    created = qdrant.sent("PUT", BASE)[0].json()
    cosine = {"size": DIM, "distance": "Cosine"}
    assert created["vectors"] == {"text": cosine, "title": cosine}
    indexes = qdrant.sent("PUT", f"{BASE}/index")
    assert {(r.json()["field_name"], r.json()["field_schema"]) for r in indexes} == {
        ("doc_id", "keyword"),
        ("acl", "keyword"),
        ("source_version", "keyword"),
    }
    assert all(r.query.get("wait") == ["true"] for r in indexes)
    store.upsert(NAME, [point("a", 0, axis(0)), point("a", 1, axis(1))])
    (upsert,) = qdrant.sent("PUT", f"{BASE}/points")
    assert upsert.query.get("wait") == ["true"]
    assert [p["payload"]["chunk_id"] for p in upsert.json()["points"]] == ["a:0", "a:1"]
    assert all(set(p["vector"]) == {"text", "title"} for p in upsert.json()["points"])
    assert all(r.headers.get("api-key") == "secret-key" for r in qdrant.requests)


def test_a_search_is_one_batch_fused_with_the_filter_on_every_stage(qdrant, store):
    store.ensure_collection(NAME, DIM)
    flt = SearchFilter(acl=("public", "staff"), doc_ids=("a",), exclude_doc_ids=("b",))
    hits = store.search(NAME, axis(0), 3, flt)
    assert hits[0].payload["chunk_id"] == "a:0"
    assert (hits[0].score, hits[0].text_score, hits[0].title_score) == (0.9, 0.9, 0.7)
    (batch,) = qdrant.sent("POST", f"{BASE}/points/query/batch")
    text, title = batch.json()["searches"]
    assert (text["using"], title["using"]) == ("text", "title")
    expected = {
        "must": [
            {"key": "acl", "match": {"any": ["public", "staff"]}},
            {"key": "doc_id", "match": {"any": ["a"]}},
        ],
        "must_not": [{"key": "doc_id", "match": {"any": ["b"]}}],
    }
    for query in (text, title):
        assert query["with_payload"] is True and query["filter"] == expected
        assert [p["using"] for p in query["prefetch"]] == ["text", "title"]
        assert all(p["filter"] == expected and p["limit"] >= 3 for p in query["prefetch"])


COSINE = models.VectorParams(size=DIM, distance=models.Distance.COSINE)
DOT = models.VectorParams(size=DIM, distance=models.Distance.DOT)


@pytest.mark.parametrize(
    "vectors",
    [COSINE, {"text": COSINE}, {"text": DOT, "title": DOT}],  # COSINE alone: before title vectors
    ids=["unnamed", "text-only", "dot"],
)
def test_a_collection_without_our_named_vectors_is_refused_with_the_fix(vectors):
    with QdrantServerStore(":memory:") as store:
        store._client.create_collection("theirs", vectors_config=vectors)
        with pytest.raises(CollectionLayoutError, match="another collection name") as raised:
            store.ensure_collection("theirs", DIM)
        assert raised.value.collection == "theirs"
        assert isinstance(raised.value, RetrievalError)


def test_delete_stale_counts_then_deletes_with_wait(qdrant, store):
    store.ensure_collection(NAME, DIM)
    assert store.delete_stale(NAME, "a", "v2") == 2
    (count,) = qdrant.sent("POST", f"{BASE}/points/count")
    assert count.json()["exact"] is True
    (delete,) = qdrant.sent("POST", f"{BASE}/points/delete")
    assert delete.query.get("wait") == ["true"]
    assert delete.json()["filter"] == {
        "must": [{"key": "doc_id", "match": {"any": ["a"]}}],
        "must_not": [{"key": "source_version", "match": {"any": ["v2"]}}],
    }


# --- every qdrant-client error arrives as ours --------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "expected", "words"),
    [
        (qdrant_error(401, "Invalid api-key"), RetrievalError, "RAGQ_QDRANT_API_KEY"),
        (qdrant_error(403, "Forbidden"), RetrievalError, "RAGQ_QDRANT_API_KEY"),
        (qdrant_error(404, "Not found"), CollectionNotFoundError, "ingest into it first"),
        (qdrant_error(503, "overloaded"), VectorStoreUnavailableError, "retry later"),
        (
            qdrant_error(429, "slow down", **{"Retry-After": "3"}),
            VectorStoreUnavailableError,
            "retry after 3s",
        ),
        (qdrant_error(500, "boom"), RetrievalError, "HTTP 500: boom"),
        (Reply(200, b"not json at all"), RetrievalError, "unreadable response"),
    ],
    ids=["401", "403", "404", "503", "429", "500", "garbage"],
)
def test_http_failures_are_translated(qdrant, store, reply, expected, words):
    qdrant.fail_next(reply, path="/collections")
    with pytest.raises(expected, match=words) as raised:
        store.collections()
    vendor = (UnexpectedResponse, ResponseHandlingException, ResourceExhaustedResponse, ValueError)
    assert isinstance(raised.value.__cause__, vendor)


def test_a_429_keeps_the_servers_retry_hint(qdrant, store):
    qdrant.fail_next(qdrant_error(429, "slow down", **{"Retry-After": "7"}), path="/collections")
    with pytest.raises(VectorStoreUnavailableError) as raised:
        store.collections()
    assert raised.value.retry_after_s == 7.0


def test_a_collection_deleted_behind_our_back_is_reported_missing(qdrant, store):
    store.ensure_collection(NAME, DIM)
    missing = qdrant_error(404, "Collection `docs` doesn't exist!")
    qdrant.fail_next(missing, path=f"{BASE}/points/query/batch")
    with pytest.raises(CollectionNotFoundError) as raised:
        store.search(NAME, axis(0), 3)
    assert raised.value.collection == NAME
    with pytest.raises(CollectionNotFoundError):  # and the cached dimension is forgotten
        store.search(NAME, axis(0), 3)


def test_a_slow_server_is_a_timeout_worth_retrying(qdrant, store):
    qdrant.fail_next(Reply(200, {"result": {"collections": []}}, delay_s=2.5), path="/collections")
    with pytest.raises(VectorStoreUnavailableError, match="ReadTimeout"):
        store.collections()


def test_an_unreachable_server_is_worth_retrying(qdrant, store):
    qdrant.stop()
    with pytest.raises(VectorStoreUnavailableError, match="ConnectError") as raised:
        store.collections()
    assert isinstance(raised.value.__cause__, ResponseHandlingException)


class FakeRpcError(grpc.RpcError, grpc.Call):
    """What the gRPC transport raises: an RpcError that is also a Call with a status code."""

    def __init__(self, code: grpc.StatusCode):
        self._code = code

    def code(self) -> grpc.StatusCode:
        return self._code

    def details(self) -> str:
        return f"fake {self._code.name}"

    def __getattr__(self, name: str) -> object:  # the rest of grpc.Call is never consulted
        raise AttributeError(name)


@pytest.mark.parametrize(
    ("exc", "expected"),
    [
        (FakeRpcError(grpc.StatusCode.NOT_FOUND), CollectionNotFoundError),
        (FakeRpcError(grpc.StatusCode.UNAVAILABLE), VectorStoreUnavailableError),
        (FakeRpcError(grpc.StatusCode.DEADLINE_EXCEEDED), VectorStoreUnavailableError),
        (FakeRpcError(grpc.StatusCode.UNAUTHENTICATED), RetrievalError),
        (FakeRpcError(grpc.StatusCode.INTERNAL), RetrievalError),
        (httpx.ConnectTimeout("slow"), VectorStoreUnavailableError),
        (ValueError("Collection docs not found"), CollectionNotFoundError),
        (ValueError("Point id x is not a valid UUID"), RetrievalError),
    ],
    ids=lambda v: type(v).__name__ if isinstance(v, Exception) else v.__name__,
)
def test_transport_and_in_memory_errors_are_translated(exc, expected):
    translated = server_error(NAME, "http://qdrant:6333", exc)
    assert type(translated) is expected
    assert translated.collection == NAME


def test_a_new_collection_has_the_idf_weighted_terms_vector_and_points_carry_terms(qdrant, store):
    from ragq.orchestration.sparse_terms import document_terms

    store.ensure_collection(NAME, DIM)
    created = qdrant.sent("PUT", BASE)[0].json()
    assert created["sparse_vectors"] == {"terms": {"modifier": "idf"}}
    terms = document_terms("replacement hinge for cabinet doors")
    store.upsert(NAME, [replace(point("a", 0, axis(0)), terms=terms)])
    (upsert,) = qdrant.sent("PUT", f"{BASE}/points")
    sent = upsert.json()["points"][0]["vector"]["terms"]
    assert (sent["indices"], sent["values"]) == (list(terms.indices), list(terms.values))


@pytest.mark.parametrize(("fusion", "query"), [
    (SearchFusion.RRF, {"rrf": {"k": 60}}), (SearchFusion.DBSF, {"fusion": "dbsf"}),
])
def test_a_hybrid_search_is_one_batch_ranked_by_the_engines_fusion(qdrant, store, fusion, query):
    store.ensure_collection(NAME, DIM)
    hit = {"id": point("a", 0, axis(0)).id, "version": 1, "score": 0.5,
           "payload": point("a", 0, axis(0)).payload}
    qdrant.route("POST", f"{BASE}/points/query/batch", lambda r: ok(
        [{"points": [{**hit, "score": 0.03}]}, {"points": [{**hit, "score": 0.8}]},
         {"points": [{**hit, "score": 0.6}]}]))
    flt = SearchFilter(acl=("public",))
    request = SearchRequest(SearchMode.HYBRID, fusion, query_terms("cabinet hinge"))
    (found,) = store.search(NAME, axis(0), 3, flt, request)
    assert (found.score, found.rank_score, found.text_score) == (0.8, 0.03, 0.8)
    (batch,) = qdrant.sent("POST", f"{BASE}/points/query/batch")
    ranking, text, title = batch.json()["searches"]
    assert ranking["query"] == query and ranking["limit"] == 3
    vectors, terms = ranking["prefetch"]  # each side one list: the vectors' fused the same way
    assert vectors["query"] == query
    assert [p["using"] for p in vectors["prefetch"]] == ["text", "title"]
    assert terms["using"] == "terms"
    assert sorted(terms["query"]["indices"]) == sorted(query_terms("cabinet hinge").indices)
    for stage in (ranking, text, title, vectors, terms, *vectors["prefetch"]):
        assert stage["filter"] == {"must": [{"key": "acl", "match": {"any": ["public"]}}]}
    # the rescoring queries see every candidate of either side
    assert text["prefetch"] == [*vectors["prefetch"], terms] == title["prefetch"]
