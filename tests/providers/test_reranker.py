"""The offline reranker: retrieval score, the ask's words, and agreement between sub-queries."""

from __future__ import annotations

from ragq.providers.offline.reranker import rerank
from ragq.schemas.flow import Evidence


def ev(chunk: str, score: float, text: str, *, slot: int = 0, ask: int | None = None,
       title: str = "") -> Evidence:
    return Evidence(chunk_id=chunk, doc_id=chunk.split(":")[0], title=title, text=text,
                    score=score, sub_query_index=slot, ask_index=ask)


def order(ranking) -> list[str]:
    return [s.chunk_id for s in ranking.scores]


def test_chunks_with_the_questions_exact_words_rise_above_closer_vectors():
    candidates = [ev("a:1", 0.60, "General overview of streaming responses."),
                  ev("b:1", 0.55, "Set max_tokens to cap the response length.")]
    assert order(rerank("What does max_tokens cap?", candidates)) == ["b:1", "a:1"]


def test_a_chunk_several_sub_queries_found_outranks_an_equal_one_found_once():
    candidates = [ev("a:1", 0.7, "Orion Labs makes lenses.", slot=0),
                  ev("a:1", 0.7, "Orion Labs makes lenses.", slot=1),
                  ev("b:1", 0.7, "Orion Labs makes lenses too.", slot=2)]
    ranking = rerank("Who makes lenses?", candidates)
    assert order(ranking) == ["a:1", "b:1"]  # one score per chunk, however often found
    assert len(ranking.scores) == 2


def test_each_candidate_is_read_against_its_own_ask():
    candidates = [ev("refund:1", 0.5, "Refunds within 30 days.", ask=0),
                  ev("keys:1", 0.5, "Rotate keys from the console.", ask=1)]
    scores = {s.chunk_id: s.score for s in rerank(
        "Refunds? Keys?", candidates, ["When are refunds paid?", "How to rotate keys?"]).scores}
    alone = {s.chunk_id: s.score for s in rerank("When are refunds paid?", candidates).scores}
    assert scores["keys:1"] > alone["keys:1"]  # read against its own ask, not the first one


def test_the_chunk_closer_to_the_whole_question_wins_a_tie_of_the_other_signals():
    near = ev("a:1", 0.6, "Lenses are ground in Jena.", slot=0).model_copy(
        update={"question_score": 0.8})
    far = ev("b:1", 0.6, "Lenses are ground in Jena.", slot=1).model_copy(
        update={"question_score": 0.2})
    ranking = rerank("Where are the lenses ground?", [far, near])
    assert order(ranking) == ["a:1", "b:1"]
    assert "similarity to the question" in ranking.reason


def test_without_a_question_score_on_every_candidate_the_signal_is_left_out():
    # Evidence from the evidence cache carries no question score: it must not rank lower.
    scored = ev("a:1", 0.6, "Lenses are ground in Jena.").model_copy(
        update={"question_score": 0.9})
    cached = ev("b:1", 0.61, "Lenses are ground in Jena.")
    ranking = rerank("Where are the lenses ground?", [scored, cached])
    assert order(ranking) == ["b:1", "a:1"]
    assert "similarity to the question" not in ranking.reason
