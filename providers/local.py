"""The roles played in process, without a model, whatever the provider.

Routing reads the question's form, and reranking re-scores evidence by signals every search
already carries (its retrieval score, its similarity to the question, the ask's words). Neither
needs a model, and each was a chained model call on every job's critical path. A sufficiency
check whose verdict cannot change what the job does next (no search can follow it, no
dependent waits for its finding) is decided here too. The rules are the offline provider's,
so a job routes, checks and ranks the same with either provider.
"""

from __future__ import annotations

from collections.abc import Sequence

from ragq.providers.offline import reranker, router
from ragq.providers.offline.provider import merged_check
from ragq.providers.offline.similarity import Similarity
from ragq.schemas.embedder import Embedder
from ragq.schemas.flow import Evidence, Ranking, RouteDecision, SufficiencyVerdict


def route(question: str) -> RouteDecision:
    """The question's class from its form, the reason naming the cues that fired."""
    decision = router.route(question)
    return decision.model_copy(update={"reason": f"local classifier: {decision.reason}"})


def rerank(question: str, candidates: Sequence[Evidence], asks: Sequence[str] = ()) -> Ranking:
    """A score per distinct chunk, each read against its own ask when ``asks`` are given."""
    return reranker.rerank(question, candidates, asks)


def check(sub_query: str, evidence: Sequence[Evidence], embedder: Embedder, *,
          found: Sequence[Evidence] = (), attempt: int = 0, previous: Sequence[str] = ()
          ) -> SufficiencyVerdict:
    """The offline check's merged verdict (sufficiency, finding, rewrite), its reason marked
    as the local rules' in the ledger."""
    verdict = merged_check(sub_query, evidence, Similarity(embedder), found=found,
                           attempt=attempt, previous=previous)
    return verdict.model_copy(update={"reason": f"local check: {verdict.reason}"})
