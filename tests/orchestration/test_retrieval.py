from collections.abc import Sequence

from ragq.orchestration.retrieval import fetch_width, search_width, spread_over_documents
from ragq.schemas.cache import CachedHit
from ragq.schemas.search import SearchFusion, SearchMode, SearchRequest


def test_the_whole_question_searches_as_wide_as_the_context() -> None:
    q = "What is the rate limit, and how do I raise it?"
    assert search_width(q, q, top_k=5, context_chunks=8) == 8
    assert search_width(f"  {q.upper()} ", q, top_k=5, context_chunks=8) == 8


def test_a_part_of_the_question_keeps_top_k() -> None:
    q = "What is the rate limit, and how do I raise it?"
    assert search_width("What is the rate limit?", q, top_k=5, context_chunks=8) == 5


def test_width_never_shrinks_below_top_k() -> None:
    q = "rate limits"
    assert search_width(q, q, top_k=12, context_chunks=8) == 12


def test_cosine_is_scale_free_and_safe_on_zero() -> None:
    from ragq.orchestration.retrieval import cosine

    assert cosine([1.0, 0.0], [3.0, 0.0]) == 1.0
    assert abs(cosine([1.0, 0.0], [0.0, 2.0])) < 1e-12
    assert cosine([0.0, 0.0], [1.0, 1.0]) == 0.0


def test_a_pass_is_weak_without_hits_or_with_a_low_top_score() -> None:
    from ragq.orchestration.retrieval import weak_pass

    assert weak_pass([], min_top_score=0.5, min_margin=0.0) == "no hits"
    assert "top score 0.400" in (weak_pass([0.4, 0.3], min_top_score=0.5, min_margin=0.0) or "")
    assert weak_pass([0.3, 0.7], min_top_score=0.5, min_margin=0.0) is None


def test_a_tiny_margin_is_weak_only_when_asked() -> None:
    from ragq.orchestration.retrieval import weak_pass

    assert weak_pass([0.8, 0.79], min_top_score=0.5, min_margin=0.0) is None
    assert "margin" in (weak_pass([0.8, 0.79], min_top_score=0.5, min_margin=0.05) or "")


def _hit(doc: str, chunk: int, source: str = "") -> CachedHit:
    return CachedHit(doc_id=doc, chunk_id=f"{doc}::{chunk}", score=0.5, title=doc,
                     text="", source=source)


def _ids(hits: Sequence[CachedHit]) -> list[str]:
    return [h.chunk_id for h in hits]


def test_a_search_keeps_one_chunk_per_document_before_any_second_one() -> None:
    hits = [_hit("manual", 0), _hit("manual", 1), _hit("manual", 2), _hit("faq", 0),
            _hit("manual", 3), _hit("billing", 0)]
    assert _ids(spread_over_documents(hits, 3)) == ["manual::0", "faq::0", "billing::0"]


def test_room_left_goes_to_further_chunks_in_the_engines_order() -> None:
    hits = [_hit("manual", 0), _hit("manual", 1), _hit("faq", 0), _hit("manual", 2)]
    assert _ids(spread_over_documents(hits, 3)) == ["manual::0", "manual::1", "faq::0"]
    assert _ids(spread_over_documents(hits, 9)) == _ids(hits)


def test_each_source_keeps_its_own_top_k() -> None:
    hits = [_hit("manual", 0, "guides"), _hit("manual", 1, "guides"),
            _hit("manual", 0, "api"), _hit("keys", 0, "api"), _hit("faq", 0, "guides")]
    assert _ids(spread_over_documents(hits, 2)) == ["manual::0", "manual::0", "keys::0",
                                                     "faq::0"]


def test_a_search_fetches_more_than_it_keeps_where_the_ranking_allows() -> None:
    assert fetch_width(5, SearchRequest(SearchMode.DENSE)) > 5
    assert fetch_width(5, SearchRequest(SearchMode.SPARSE)) > 5


def test_a_hybrid_search_fetches_exactly_what_it_keeps() -> None:
    for fusion in SearchFusion:
        assert fetch_width(5, SearchRequest(SearchMode.HYBRID, fusion)) == 5
