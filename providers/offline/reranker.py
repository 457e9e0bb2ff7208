"""Reranking a job's pooled evidence without a model: three signals every retrieval already
carries, measured on the evaluation sets against dense similarity to the whole question (which
ranks worse: a hop's evidence resembles its sub-query, not the question).

- the chunk's similarity to the sub-query that found it (its retrieval score, the best one when
  several found it);
- the share of its ask's key words (stemmed) it contains, title included: exact names and
  identifiers that dense similarity blurs ("max_tokens", "Karelia Suite");
- agreement: each further sub-query that found the same chunk adds to it;
- the chunk's similarity to the job's whole question (``question_score``, the cosine the
  search already computed), with a small weight: alone it ranks worse than the signals above
  (a hop's evidence resembles its sub-query, not the question), beside them it breaks ties
  toward the chunks that serve the question's last hop (musique 0.53 -> 0.55 all-gold in
  context, the other sets unchanged). It counts only when every candidate has it: evidence from
  the evidence cache carries none, and a missing score must not rank a chunk lower.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from ragq.orchestration.text import term_overlap
from ragq.schemas.flow import ChunkScore, Evidence, Ranking

LEXICAL_WEIGHT = 0.4  # score points one full coverage of the ask's words is worth
AGREEMENT_WEIGHT = 0.05  # score points per further sub-query that found the chunk
QUESTION_WEIGHT = 0.2  # score points per unit of the chunk's cosine to the whole question


def rerank(question: str, candidates: Sequence[Evidence], asks: Sequence[str] = ()) -> Ranking:
    """A score per distinct chunk of ``candidates`` (see the module); each candidate is read
    against its own ask when ``asks`` are given."""
    best: dict[str, Evidence] = {}
    finders: dict[str, set[int | None]] = defaultdict(set)
    for item in candidates:
        finders[item.chunk_id].add(item.sub_query_index)
        if item.chunk_id not in best or item.score > best[item.chunk_id].score:
            best[item.chunk_id] = item
    by_question = all(item.question_score is not None for item in best.values())
    scores = []
    for chunk_id, item in best.items():
        ask = asks[item.ask_index] if asks and item.ask_index is not None \
            and item.ask_index < len(asks) else question
        score = (item.score + LEXICAL_WEIGHT * term_overlap(ask, f"{item.title} {item.text}")
                 + AGREEMENT_WEIGHT * (len(finders[chunk_id]) - 1)
                 + (QUESTION_WEIGHT * (item.question_score or 0.0) if by_question else 0.0))
        scores.append(ChunkScore(chunk_id=chunk_id, score=round(score, 6)))
    return Ranking(scores=sorted(scores, key=lambda s: -s.score),
                   reason="retrieval score + ask word coverage + agreement of sub-queries"
                   + (" + similarity to the question" if by_question else ""))
