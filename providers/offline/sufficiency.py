"""Does this evidence answer this sub-query? — from two signals that fail
differently: embedding similarity (topical match, blind to a wrong name) and lexical coverage of
the sub-query's entities and key terms (exact, blind to paraphrase). A missing named entity
always means "not yet": evidence about another person cannot answer a question about this one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ragq.providers.offline.lexicon import coverage, entities
from ragq.providers.offline.similarity import Similarity
from ragq.schemas.flow import Evidence, SufficiencyVerdict

TOP_EVIDENCE = 5  # evidence items read, best score first
SIM_FLOOR = 0.35  # below: off-topic whatever the words say
SIM_STRONG = 0.6  # above: a paraphrase may cover what the words miss
COVERAGE_SUFFICIENT = 0.7  # share of weighted key terms found
COVERAGE_WITH_STRONG_SIM = 0.5


def best_evidence(evidence: Sequence[Evidence], limit: int) -> list[Evidence]:
    """The best ``limit`` items, best score first."""
    return sorted(evidence, key=lambda e: -e.score)[:limit]


def texts_of(items: Sequence[Evidence]) -> list[str]:
    """Title and text of each item: what the roles read."""
    return [f"{e.title}\n{e.text}" if e.title else e.text for e in items]


def evidence_texts(evidence: Sequence[Evidence], limit: int) -> list[str]:
    """Title and text of the best ``limit`` items: what the roles read."""
    return texts_of(best_evidence(evidence, limit))


def check(sub_query: str, evidence: Sequence[Evidence], similarity: Similarity
          ) -> SufficiencyVerdict:
    """Sufficient when every entity of the sub-query is present and enough of its key terms
    are, and the best evidence is on topic; ``missing_terms`` lists what is absent."""
    query = re.sub(r"\{\d+\}", " ", sub_query)
    top = best_evidence(evidence, TOP_EVIDENCE)
    texts = texts_of(top)
    if not texts:
        return SufficiencyVerdict(sufficient=False, score=0.0, missing_terms=entities(query),
                                  reason="no evidence")
    cov, missing = coverage(query, texts)
    sim = _best_similarity(sub_query, query, top[:3], similarity)
    missing_entities = [m for m in missing if m in entities(query)]
    enough = cov >= COVERAGE_SUFFICIENT or (sim >= SIM_STRONG and cov >= COVERAGE_WITH_STRONG_SIM)
    sufficient = not missing_entities and sim >= SIM_FLOOR and enough
    score = max(0.0, min(1.0, 0.5 * cov + 0.5 * max(sim, 0.0)))
    why = (f"coverage {cov:.2f}, similarity {sim:.2f}"
           + (f", missing entities {missing_entities}" if missing_entities else ""))
    return SufficiencyVerdict(sufficient=sufficient, score=score, missing_terms=missing,
                              reason=why)


def _best_similarity(sub_query: str, query: str, top: Sequence[Evidence],
                     similarity: Similarity) -> float:
    """The best cosine of ``query`` with the ``top`` items' texts: the search's own (each
    item's ``text_score``, the same query against the stored vector of the same titled text)
    when every one has it and the query is the one searched (no unfilled ``{n}``), else
    embedded now. Embedding them again cost about 120 ms per check, most of an offline job's
    CPU."""
    scores = [e.text_score for e in top]
    if query == sub_query and all(s is not None for s in scores):
        return max(s for s in scores if s is not None)
    return similarity.best(query, texts_of(top))
