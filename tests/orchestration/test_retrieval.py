from orchestration.retrieval import search_width


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
