from hypothesis import given
from hypothesis import strategies as st

from ragq.orchestration.text import normalize_query
from ragq.providers.offline.rewriter import rewrite
from tests.providers.conftest import ev

EVIDENCE = [ev("a", "Finlandia is a tone poem by Jean Sibelius, first performed in Helsinki.",
               title="Finlandia")]
QUERY = "Who conducted the first performance of Finlandia in 1900?"


def test_each_attempt_takes_a_new_angle_and_never_repeats():
    tried = [QUERY]
    for attempt in range(1, 8):
        result = rewrite(QUERY, EVIDENCE, attempt=attempt, previous=tried)
        assert normalize_query(result.text) not in {normalize_query(t) for t in tried}
        assert result.reason
        tried.append(result.text)
    assert len({normalize_query(t) for t in tried}) == len(tried)


def test_first_angle_keeps_only_key_terms():
    result = rewrite(QUERY, EVIDENCE, attempt=1, previous=[QUERY])
    assert result.text == "Finlandia conducted first performance 1900"


def test_missing_terms_come_first_on_the_second_attempt():
    result = rewrite(QUERY, EVIDENCE, attempt=2, previous=[QUERY])
    assert result.text.split()[0] == "conducted"  # as the query spells it, not its stem


def test_rewrites_without_evidence_still_differ():
    first = rewrite("refund window", [], attempt=1, previous=["refund window"])
    second = rewrite("refund window", [], attempt=2, previous=["refund window", first.text])
    assert normalize_query(first.text) != normalize_query(second.text)
    assert "refund window" not in {normalize_query(first.text), normalize_query(second.text)}


@given(st.text(max_size=40), st.lists(st.text(max_size=30), max_size=8),
       st.integers(min_value=1, max_value=6))
def test_never_returns_a_query_already_tried(query, previous, attempt):
    result = rewrite(query, EVIDENCE, attempt=attempt, previous=previous)
    assert normalize_query(result.text) not in {normalize_query(q) for q in [*previous, query]}
