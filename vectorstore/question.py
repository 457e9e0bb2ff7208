"""A second vector scored against a search's hits, the same way in every adapter.

The offline verifier weighs how close the job's whole question is to its best evidence. The
store holds each chunk's text vector (the embedding of its titled text), so the cosine is cheapest
where the search already is: the adapters add one query to the search's batch that rescores the
search's own candidates (the same prefetches as the text and title rescoring) on the ``text``
vector with the question. The engine computes that cosine exactly as it computes ``text_score``,
only point ids and scores come back, and it costs no extra round trip. Fetching the candidates'
text vectors instead (``with_vector``) would ship up to ``4 * top_k + 20`` 384-float vectors per
search, as JSON from a server, to compute the same dot products in Python.

A question equal to the query needs no extra query: its cosines are the text scores.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from ragq.vectorstore.base import Hit
from ragq.vectorstore.checks import as_vector
from ragq.vectorstore.fusion import ScoredPoint


def question_query(collection: str, query: list[float], question: Sequence[float] | None,
                   dim: int) -> list[float] | None:
    """The question vector to add to the batch: None when there is none or when it is the
    query itself. Raises as :func:`~vectorstore.checks.as_vector` does."""
    if question is None:
        return None
    vector = as_vector(collection, question, dim)
    return None if vector == query else vector


def with_question_scores(hits: Sequence[Hit], question: Sequence[float] | None,
                         scored: Iterable[ScoredPoint] | None) -> list[Hit]:
    """``hits`` with their ``question_score``: from ``scored`` (the question's rescoring of the
    candidates), the text score when the question was the query (``scored`` None), none when no
    ``question`` was asked. A hit the rescoring missed keeps None."""
    if question is None:
        return list(hits)
    if scored is None:
        return [replace(h, question_score=h.text_score) for h in hits]
    by_id = {p.id: p.score for p in scored}
    return [replace(h, question_score=by_id.get(h.id)) for h in hits]
